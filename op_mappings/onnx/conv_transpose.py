"""ONNX ConvTranspose -> WebNN convTranspose2d (NCHW input, IOHW filter: WebNN defaults).

Padding follows the ONNX rules: explicit `pads`, or from `output_shape` / `auto_pad`
(total = stride*(in-1) + output_padding + (k-1)*d + 1 - out; SAME_UPPER puts the smaller half
at the beginning, otherwise the larger half). 1-D is lifted to 2-D.
- An `output_shape` larger than the natural size gives negative padding: the output is
  extended at the end with rows that only receive the bias (as onnxruntime does, and the
  ONNX reference for auto_pad NOTSET; the reference splits it like SAME_* padding for
  SAME_UPPER/SAME_LOWER): the convolution runs with the non-negative part, the result is
  zero-padded and the bias is added afterwards.
- 3-D: one convTranspose2d over (H, W) per depth tap kd of the filter (all depth slices
  batched as [N·D, C, H, W]); each result is spread along the output depth with stride
  (zero rows interleaved), shifted by kd·dilation, summed, and cropped by the depth pads.
Restrictions: float32/float16; 1-, 2- or 3-D spatial.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import int_list
from op_mappings._common.values import ints
from op_mappings.onnx import onnx_op
from op_mappings.onnx._spatial import resolve_pads, webnn_padding


def _spread(ctx: ImportContext, y: Any, stride: int) -> Any:
    """[N, O, D, R] -> [N, O, (D - 1)·stride + 1, R] with stride - 1 zero rows between."""
    b = ctx.builder
    if stride == 1:
        return y
    n, o, d, r = y.shape
    zeros = ctx.constant(np.zeros((n, o, d, stride - 1, r), dtype=y.data_type))
    z = b.concat([b.reshape(y, [n, o, d, 1, r]), zeros], 3)
    z = b.reshape(z, [n, o, d * stride, r])
    return b.slice(z, [0, 0, 0, 0], [n, o, (d - 1) * stride + 1, r])


def _conv_transpose3d(ctx: ImportContext, x: Any, w: Any, strides: Sequence[int],
                      dilations: Sequence[int], pads: Sequence[tuple[int, int]],
                      out_pad: Sequence[int], groups: int) -> Any:
    """Without bias; pads non-negative."""
    b = ctx.builder
    n, c, d, h, wd = x.shape
    kd = w.shape[2]
    xs = b.reshape(b.transpose(x, permutation=[0, 2, 1, 3, 4]), [n * d, c, h, wd])
    full = (d - 1) * strides[0] + (kd - 1) * dilations[0] + 1 + out_pad[0]
    total = None
    for k in range(kd):
        wk = b.reshape(b.slice(w, [0, 0, k, 0, 0], [w.shape[0], w.shape[1], 1, *w.shape[3:]]),
                       [w.shape[0], w.shape[1], *w.shape[3:]])
        yk = b.conv_transpose2d(xs, wk, padding=webnn_padding(pads[1:]),
                                strides=list(strides[1:]), dilations=list(dilations[1:]),
                                output_padding=list(out_pad[1:]), groups=groups)
        o, ho, wo = yk.shape[1], yk.shape[2], yk.shape[3]
        yk = b.transpose(b.reshape(yk, [n, d, o, ho * wo]), permutation=[0, 2, 1, 3])
        yk = _spread(ctx, yk, strides[0])
        start = k * dilations[0]
        yk = b.pad(yk, [0, 0, start, 0], [0, 0, full - start - yk.shape[2], 0])
        total = yk if total is None else b.add(total, yk)
    assert total is not None
    o, size = total.shape[1], total.shape[3]
    pb, pe = pads[0]
    total = b.slice(total, [0, 0, pb, 0], [n, o, full - pb - pe, size])
    return b.reshape(total, [n, o, full - pb - pe, ho, wo])


@onnx_op("ConvTranspose", since=1)
def conv_transpose(ctx: ImportContext, node: Node) -> Outputs:
    x, w, bias = ctx.required(node, 0), ctx.required(node, 1), ctx.optional(node, 2)
    if x.rank not in (3, 4, 5):
        raise UnsupportedAttribute(f"ConvTranspose with {x.rank - 2} spatial dimensions is "
                                   "not supported (1-, 2- and 3-D only)")
    b = ctx.builder
    n = x.rank - 2
    a = node.attrs
    kernel = int_list(a.get("kernel_shape", w.shape[2:]), "kernel_shape", n, 1)
    strides = int_list(a.get("strides", [1] * n), "strides", n, 1)
    dilations = int_list(a.get("dilations", [1] * n), "dilations", n, 1)
    out_pad = int_list(a.get("output_padding", [0] * n), "output_padding", n, 0)
    auto_pad = a["auto_pad"]
    in_sizes = x.shape[2:]
    if "output_shape" in a and len(ints(a["output_shape"])) < n:
        raise InvalidModel(f"output_shape {ints(a['output_shape'])} has fewer than {n} "
                           "entries")
    if "output_shape" in a or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        target = (ints(a["output_shape"])[-n:] if "output_shape" in a
                  else [s * st for s, st in zip(in_sizes, strides, strict=True)])
        pads = []
        for i in range(n):
            total = (strides[i] * (in_sizes[i] - 1) + out_pad[i]
                     + (kernel[i] - 1) * dilations[i] + 1 - target[i])
            if total < 0:  # extend at the end (onnxruntime; the reference for NOTSET)
                pads.append((0, total))
                continue
            small, big = total // 2, total - total // 2
            pads.append((small, big) if auto_pad == "SAME_UPPER" else (big, small))
    else:
        pads = resolve_pads(auto_pad, in_sizes, kernel, strides, dilations,
                            ints(a["pads"]) if "pads" in a else None)
    extend = [(max(0, -pb), max(0, -pe)) for pb, pe in pads]
    pads = [(max(0, pb), max(0, pe)) for pb, pe in pads]
    late_bias = any(v for p in extend for v in p) or n == 3
    groups = int(a["group"])
    if n == 3:
        y = _conv_transpose3d(ctx, x, w, strides, dilations, pads, out_pad, groups)
    else:
        if n == 1:
            x = b.reshape(x, [*x.shape, 1])
            w = b.reshape(w, [*w.shape, 1])
            strides, dilations, pads, out_pad = ([*strides, 1], [*dilations, 1],
                                                 [*pads, (0, 0)], [*out_pad, 0])
        y = b.conv_transpose2d(x, w, padding=webnn_padding(pads), strides=strides,
                               dilations=dilations, output_padding=out_pad, groups=groups,
                               bias=None if late_bias else bias)
        if n == 1:
            y = b.reshape(y, list(y.shape[:-1]))
    if any(v for p in extend for v in p):
        y = b.pad(y, [0, 0, *(p[0] for p in extend)], [0, 0, *(p[1] for p in extend)])
    if late_bias and bias is not None:
        y = b.add(y, b.reshape(bias, [1, bias.shape[0]] + [1] * n))
    return [y]
