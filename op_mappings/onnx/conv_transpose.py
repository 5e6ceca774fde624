"""ONNX ConvTranspose -> WebNN convTranspose2d (NCHW input, IOHW filter: WebNN defaults).

Padding follows the ONNX rules: explicit `pads`, or from `output_shape` / `auto_pad`
(total = stride*(in-1) + output_padding + (k-1)*d + 1 - out; SAME_UPPER puts the smaller half
at the beginning, otherwise the larger half). 1-D is lifted to 2-D.
Restrictions: 1-D or 2-D spatial; float32/float16; output_shape that would need negative
padding is not supported.
"""

from __future__ import annotations

from typing import Any

from converter.formats.onnx import Node
from converter.importer import ImportContext
from op_mappings.onnx import onnx_op
from op_mappings.onnx._spatial import check_spatial_rank, resolve_pads, webnn_padding
from op_mappings.onnx._util import ints


@onnx_op("ConvTranspose", since=1)
def conv_transpose(ctx: ImportContext, node: Node) -> list[Any]:
    x, w, bias = ctx.inputs(node, optional=(2,))
    check_spatial_rank("ConvTranspose", x.rank)
    b = ctx.builder
    n = x.rank - 2
    a = node.attrs
    kernel = ints(a["kernel_shape"]) if "kernel_shape" in a else list(w.shape[2:])
    strides = ints(a["strides"]) if "strides" in a else [1] * n
    dilations = ints(a["dilations"]) if "dilations" in a else [1] * n
    out_pad = ints(a["output_padding"]) if "output_padding" in a else [0] * n
    auto_pad = a["auto_pad"]
    in_sizes = x.shape[2:]
    if "output_shape" in a or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        target = (ints(a["output_shape"])[-n:] if "output_shape" in a
                  else [s * st for s, st in zip(in_sizes, strides, strict=True)])
        pads = []
        for i in range(n):
            total = (strides[i] * (in_sizes[i] - 1) + out_pad[i]
                     + (kernel[i] - 1) * dilations[i] + 1 - target[i])
            if total < 0:
                raise ctx.unsupported(f"output_shape {target} needs negative padding")
            small, big = total // 2, total - total // 2
            pads.append((small, big) if auto_pad == "SAME_UPPER" else (big, small))
    else:
        pads = resolve_pads(auto_pad, in_sizes, kernel, strides, dilations,
                            ints(a["pads"]) if "pads" in a else None)
    if n == 1:
        x = b.reshape(x, [*x.shape, 1])
        w = b.reshape(w, [*w.shape, 1])
        strides, dilations, pads, out_pad = ([*strides, 1], [*dilations, 1], [*pads, (0, 0)],
                                             [*out_pad, 0])
    y = b.conv_transpose2d(x, w, padding=webnn_padding(pads), strides=strides,
                           dilations=dilations, output_padding=out_pad,
                           groups=int(a["group"]), bias=bias)
    if n == 1:
        y = b.reshape(y, list(y.shape[:-1]))
    return [y]
