"""CONV_2D -> WebNN conv2d (NHWC input, OHWI filter as stored, explicit SAME padding).

Grouped when the filter's input channels are fewer than the input's
(groups = C_in / filter.shape[3]). Fused activation applied after the conv. Quantized
(int8/uint8, per-tensor or per-channel weights, int32 bias) and hybrid models run as
dequantizeLinear -> float conv2d -> quantizeLinear.
"""

from __future__ import annotations

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._checks import rank
from op_mappings.tflite._util import activation, fin, fout, spatial_padding


@tflite_op("CONV_2D", since=1)
def conv_2d(ctx: ImportContext, node: Node) -> Outputs:
    """CONV_2D: filter [O, kh, kw, I/groups]; padding SAME/VALID computed explicitly."""
    x, w, bias = fin(ctx, node, 0), fin(ctx, node, 1), fin(ctx, node, 2)
    assert x is not None and w is not None
    rank(x, 4, "input")
    rank(w, 4, "filter")
    a = node.attrs
    c_in, c_f = x.shape[3], w.shape[3]
    if c_f == 0 or c_in % c_f:
        raise InvalidModel(f"input channels {c_in} are not a multiple of the filter's {c_f}")
    strides = [int(a["stride_h"]), int(a["stride_w"])]
    dil = [int(a["dilation_h_factor"]), int(a["dilation_w_factor"])]
    pad = spatial_padding(a["padding"], x.shape[1:3], w.shape[1:3], strides, dil)
    y = ctx.builder.conv2d(x, w, padding=pad, strides=strides, dilations=dil,
                           groups=c_in // c_f, input_layout="nhwc", filter_layout="ohwi",
                           bias=bias)
    return [fout(ctx, node, 0, activation(ctx, y, a["fused_activation_function"]))]
