"""DEPTHWISE_CONV_2D -> WebNN conv2d with filter layout "ihwo" and groups = input channels.

The filter [1, kh, kw, C_in*M] is used as stored (WebNN ihwo = [C_in/groups, kh, kw, C_out]);
the multiplier M is derived from the shapes (the `depth_multiplier` option is redundant), so
M > 1 works. Explicit SAME padding with dilation; fused activation; quantized as QDQ.
"""

from __future__ import annotations

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._checks import rank
from op_mappings.tflite._util import activation, fin, fout, spatial_padding


@tflite_op("DEPTHWISE_CONV_2D", since=1)
def depthwise_conv_2d(ctx: ImportContext, node: Node) -> Outputs:
    """DEPTHWISE_CONV_2D: groups = C_in (never filter.shape[3])."""
    x, w, bias = fin(ctx, node, 0), fin(ctx, node, 1), fin(ctx, node, 2)
    assert x is not None and w is not None
    rank(x, 4, "input")
    rank(w, 4, "filter")
    a = node.attrs
    c_in, c_out = x.shape[3], w.shape[3]
    if w.shape[0] != 1 or c_out % c_in:
        raise InvalidModel(f"depthwise filter {list(w.shape)} does not fit {c_in} input "
                           "channels")
    strides = [int(a["stride_h"]), int(a["stride_w"])]
    dil = [int(a["dilation_h_factor"]), int(a["dilation_w_factor"])]
    pad = spatial_padding(a["padding"], x.shape[1:3], w.shape[1:3], strides, dil)
    y = ctx.builder.conv2d(x, w, padding=pad, strides=strides, dilations=dil, groups=c_in,
                           input_layout="nhwc", filter_layout="ihwo", bias=bias)
    return [fout(ctx, node, 0, activation(ctx, y, a["fused_activation_function"]))]
