"""TRANSPOSE_CONV (inputs: output_shape, weights [O,kh,kw,I], input, bias?) -> WebNN
convTranspose2d (NHWC, filter layout "ohwi") with explicit padding and outputSizes.

Padding is TFLite's forward SAME formula with the output as the forward input (odd pixel at
the end); the requested output size is passed as `outputSizes`. Fused activation from
version 4 on. Also the MediaPipe custom op `Convolution2DTransposeBias` (x, weights, bias;
12-byte options: padding (1 SAME / 2 VALID), stride_w, stride_h).
Restrictions: output_shape must be constant; no dilation (TFLite has none).
"""

from __future__ import annotations

import struct

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._checks import rank
from op_mappings.tflite._util import SAME, VALID, activation, const_ints, fin, fout


def _emit(ctx: ImportContext, x: MLOperand, w: MLOperand, bias: MLOperand | None,
          out_hw: list[int], padding: int, strides: list[int]) -> MLOperand:
    rank(x, 4, "input")
    rank(w, 4, "filter")
    if min(strides) < 1:
        raise InvalidModel(f"strides {strides} must be at least 1")
    pads = []
    for axis in range(2):
        size_in, k, s, size_out = (x.shape[1 + axis], w.shape[1 + axis], strides[axis],
                                   out_hw[axis])
        if padding == VALID:
            pads += [0, 0]
        elif padding == SAME:
            total = max((size_in - 1) * s + k - size_out, 0)
            pads += [total // 2, total - total // 2]
        else:
            raise UnsupportedAttribute(f"padding {padding} is not SAME or VALID")
    return ctx.builder.conv_transpose2d(
        x, w, padding=pads, strides=strides, output_sizes=out_hw,
        input_layout="nhwc", filter_layout="ohwi", bias=bias)


@tflite_op("TRANSPOSE_CONV", since=1, const_inputs=(0,))
def transpose_conv(ctx: ImportContext, node: Node) -> Outputs:
    """TRANSPOSE_CONV: note the argument order (output_shape first, data third)."""
    shape = const_ints(ctx, node, 0)
    w, x = fin(ctx, node, 1), fin(ctx, node, 2)
    bias = fin(ctx, node, 3) if len(node.inputs) > 3 else None
    assert x is not None and w is not None
    if len(shape) != 4:
        raise InvalidModel(f"output_shape {shape} is not 4-D")
    a = node.attrs
    y = _emit(ctx, x, w, bias, shape[1:3], int(a["padding"]),
              [int(a["stride_h"]), int(a["stride_w"])])
    if node.version >= 4 or a.get("fused_activation_function", 0):
        y = activation(ctx, y, a.get("fused_activation_function", 0))
    return [fout(ctx, node, 0, y)]


@tflite_op("Convolution2DTransposeBias", custom=True)
def conv_transpose_bias(ctx: ImportContext, node: Node) -> Outputs:
    """MediaPipe Convolution2DTransposeBias: output size (in-1)*s + k (VALID) or in*s
    (SAME)."""
    raw = node.attrs.get("custom_options", b"")
    if len(raw) < 12:
        raise InvalidModel("Convolution2DTransposeBias options are not 12 bytes")
    pad_code, stride_w, stride_h = struct.unpack("<iii", raw[:12])
    x, w, bias = fin(ctx, node, 0), fin(ctx, node, 1), fin(ctx, node, 2)
    assert x is not None and w is not None
    strides = [stride_h, stride_w]
    padding = {1: SAME, 2: VALID}.get(pad_code)
    if padding is None:
        raise UnsupportedAttribute(f"padding code {pad_code} is not SAME (1) or VALID (2)")
    if padding == SAME:
        out = [x.shape[1] * stride_h, x.shape[2] * stride_w]
    else:
        out = [(x.shape[1] - 1) * stride_h + w.shape[1], (x.shape[2] - 1) * stride_w + w.shape[2]]
    return [fout(ctx, node, 0, _emit(ctx, x, w, bias, out, padding, strides))]
