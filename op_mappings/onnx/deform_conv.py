"""ONNX DeformConv (19, 22) -> bilinear sampling with gatherElements + a grouped matmul.

For output position (i, j), kernel tap (ki, kj) and offset group o, the sampling point is
(i·stride_h - pad_top + ki·dilation_h + Δy, j·stride_w - pad_left + kj·dilation_w + Δx)
with (Δy, Δx) read from `offset` (channels ordered [offset_group, kH, kW, (y, x)]). The
input is read bilinearly at that point: the four neighbouring pixels with weights
(1 - t)·(1 - u) ... ; a neighbour outside the input reads 0 (as ONNX's reference, which
samples with GridSample zeros/align_corners, and onnxruntime). The samples, times the
optional `mask` ([offset_group, kH, kW] channels), form the im2col matrix
[N, group, C/group·kH·kW, oH·oW], multiplied by the weights [group, M/group, C/group·kH·kW]
(one batched matmul), plus the optional bias. Coordinates and weights are float32 (a float16
input is computed in float32 and cast back).
Restrictions: 2-D (4-D input) only; float32/float16; the offset's spatial size must be the
convolution output size.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import ints
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import float_dtype_check


def _f32(ctx: ImportContext, v: Any) -> Any:
    return ctx.builder.cast(v, "float32") if v.data_type != "float32" else v


@onnx_op("DeformConv", since=19)
def deform_conv(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x, w, offset, bias, mask = ctx.inputs(node, optional=(3, 4))
    assert x is not None and w is not None and offset is not None
    for name, v in (("X", x), ("W", w), ("offset", offset), ("B", bias), ("mask", mask)):
        if v is not None:
            float_dtype_check(node, v, name)
    if x.rank != 4:
        raise UnsupportedAttribute(f"DeformConv on a rank-{x.rank} input is not supported "
                                   "(2-D convolution, 4-D input, only)")
    a = node.attrs
    n, c, h, wd = x.shape
    m = w.shape[0]
    kernel = ints(a["kernel_shape"]) if a.get("kernel_shape") else list(w.shape[2:])
    strides = ints(a["strides"]) if a.get("strides") else [1, 1]
    dilations = ints(a["dilations"]) if a.get("dilations") else [1, 1]
    pads = ints(a["pads"]) if a.get("pads") else [0, 0, 0, 0]
    group = int(a.get("group", 1))
    og = int(a.get("offset_group", 1))
    kh, kw = kernel
    k = kh * kw
    if w.rank != 4 or list(w.shape[2:]) != kernel or w.shape[1] * group != c or m % group:
        raise InvalidModel(f"DeformConv W {list(w.shape)} does not match X {list(x.shape)}, "
                           f"group {group} and kernel_shape {kernel}")
    if og < 1 or c % og:
        raise InvalidModel(f"DeformConv offset_group {og} must divide the {c} input channels")
    oh = (h + pads[0] + pads[2] - ((kh - 1) * dilations[0] + 1)) // strides[0] + 1
    ow = (wd + pads[1] + pads[3] - ((kw - 1) * dilations[1] + 1)) // strides[1] + 1
    if list(offset.shape) != [n, og * k * 2, oh, ow]:
        raise InvalidModel(f"DeformConv offset shape {list(offset.shape)}, expected "
                           f"{[n, og * k * 2, oh, ow]}")
    if mask is not None and list(mask.shape) != [n, og * k, oh, ow]:
        raise InvalidModel(f"DeformConv mask shape {list(mask.shape)}, expected "
                           f"{[n, og * k, oh, ow]}")
    if bias is not None and list(bias.shape) != [m]:
        raise InvalidModel(f"DeformConv B shape {list(bias.shape)}, expected [{m}]")
    p = oh * ow
    dt = x.data_type

    def c32(value: Any) -> Any:
        return ctx.constant(np.asarray(value, dtype=np.float32))

    # base sampling points [1, 1, K, P]
    ki, kj = np.meshgrid(np.arange(kh), np.arange(kw), indexing="ij")
    oi, oj = np.meshgrid(np.arange(oh), np.arange(ow), indexing="ij")
    base_y = (oi.reshape(1, -1) * strides[0] - pads[0] + ki.reshape(-1, 1) * dilations[0])
    base_x = (oj.reshape(1, -1) * strides[1] - pads[1] + kj.reshape(-1, 1) * dilations[1])
    off = b.reshape(_f32(ctx, offset), [n, og, k, 2, p])
    dy = b.reshape(b.slice(off, [0, 0, 0, 0, 0], [n, og, k, 1, p]), [n, og, k, p])
    dx = b.reshape(b.slice(off, [0, 0, 0, 1, 0], [n, og, k, 1, p]), [n, og, k, p])
    py = b.add(dy, c32(base_y.reshape(1, 1, k, p)))
    px = b.add(dx, c32(base_x.reshape(1, 1, k, p)))
    y0, x0 = b.floor(py), b.floor(px)
    ty, tx = b.sub(py, y0), b.sub(px, x0)
    one = c32(1.0)
    taps_y = [(y0, b.sub(one, ty)), (b.add(y0, one), ty)]
    taps_x = [(x0, b.sub(one, tx)), (b.add(x0, one), tx)]
    flat = b.reshape(_f32(ctx, x), [n, c, h * wd])
    cg = c // og
    cols = None
    for ya, wy in taps_y:
        in_y = b.logical_and(b.greater_or_equal(ya, c32(0.0)), b.lesser(ya, c32(float(h))))
        yi = b.min(b.max(ya, c32(0.0)), c32(float(h - 1)))
        for xa, wx in taps_x:
            inside = b.logical_and(in_y, b.logical_and(
                b.greater_or_equal(xa, c32(0.0)), b.lesser(xa, c32(float(wd)))))
            xi = b.min(b.max(xa, c32(0.0)), c32(float(wd - 1)))
            idx = b.cast(b.add(b.mul(yi, c32(float(wd))), xi), "int32")  # [N, og, K, P]
            idx = b.reshape(idx, [n, og, 1, k * p])
            if cg != 1:
                idx = b.expand(idx, [n, og, cg, k * p])
            val = b.gather_elements(flat, b.reshape(idx, [n, c, k * p]), axis=2)
            weight = b.where(inside, b.mul(wy, wx), c32(0.0))
            val = b.mul(b.reshape(val, [n, og, cg, k * p]), b.reshape(weight,
                                                                      [n, og, 1, k * p]))
            cols = val if cols is None else b.add(cols, val)
    assert cols is not None
    if mask is not None:
        cols = b.mul(cols, b.reshape(_f32(ctx, mask), [n, og, 1, k * p]))
    cols = b.reshape(cols, [n, group, (c // group) * k, p])
    weights = b.reshape(_f32(ctx, w), [1, group, m // group, (c // group) * k])
    y = b.reshape(b.matmul(weights, cols), [n, m, oh, ow])
    if bias is not None:
        y = b.add(y, b.reshape(_f32(ctx, bias), [1, m, 1, 1]))
    return [b.cast(y, dt) if dt != "float32" else y]
