"""ONNX Conv -> WebNN conv2d (NCHW input, OIHW filter: the WebNN defaults).

auto_pad becomes explicit padding; pads [x1_b, x2_b, x1_e, x2_e] -> [bH, eH, bW, eW]. 1-D
convolutions are reshaped to 2-D with a unit width.
Restrictions: 1-D or 2-D spatial (3-D is not supported); float32/float16.
"""

from __future__ import annotations

from typing import Any

from converter.formats.onnx import Node
from converter.importer import ImportContext
from op_mappings.onnx import onnx_op
from op_mappings.onnx._spatial import check_spatial_rank, resolve_pads, webnn_padding
from op_mappings.onnx._util import ints


@onnx_op("Conv", since=1)
def conv(ctx: ImportContext, node: Node) -> list[Any]:
    x, w, bias = ctx.inputs(node, optional=(2,))
    check_spatial_rank("Conv", x.rank)
    b = ctx.builder
    n = x.rank - 2
    a = node.attrs
    kernel = ints(a["kernel_shape"]) if "kernel_shape" in a else list(w.shape[2:])
    strides = ints(a["strides"]) if "strides" in a else [1] * n
    dilations = ints(a["dilations"]) if "dilations" in a else [1] * n
    pads = resolve_pads(a["auto_pad"], x.shape[2:], kernel, strides, dilations,
                        ints(a["pads"]) if "pads" in a else None)
    one_d = n == 1
    if one_d:
        x = b.reshape(x, [*x.shape, 1])
        w = b.reshape(w, [*w.shape, 1])
        strides, dilations, pads = [*strides, 1], [*dilations, 1], [*pads, (0, 0)]
    y = b.conv2d(x, w, padding=webnn_padding(pads), strides=strides, dilations=dilations,
                 groups=int(a["group"]), bias=bias)
    if one_d:
        y = b.reshape(y, list(y.shape[:-1]))
    return [y]
