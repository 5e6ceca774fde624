"""Torch implementation: resample2d (mirrors the reference kernels/resample.py, spec
half-pixel mapping).

For each resampled axis with input size n and output size m:
src = clamp((dst + 0.5) * n / m - 0.5, 0, n - 1). Index tables and weights are computed once
at compile time with exact integer arithmetic.
- nearest-neighbor: index ceil(src - 0.5) (round half down); values are copied exactly.
- linear: v0 = floor(src), v1 = ceil(src), t = src - v0, result v0·(1 - t) + v1·t along the
  second axis, then the first, in float32 (float16 inputs too, also on CUDA). uint8/int8 are computed
  exactly in int64 as rationals, rounded half to even once and saturated to the type range.
"""

from __future__ import annotations

import numpy as np
import torch

from converter.core.webnn.half_pixel import linear_weights, nearest_indices
from converter.runtimes.torch.registry import Fn, Node, impl


def _shape_along(rank: int, axis: int, size: int) -> list[int]:
    shape = [1] * rank
    shape[axis] = size
    return shape


@impl("resample2d")
def resample2d(node: Node) -> Fn:
    axes = [int(a) for a in node.options["axes"]]
    xs, out = node.operand(0).shape, node.out_shape
    ctx = node.ctx
    if node.options["mode"] == "nearest-neighbor":
        tables = [(a, ctx.tensor(nearest_indices(xs[a], out[a]))) for a in axes
                  if xs[a] != out[a]]

        def nearest(x: torch.Tensor) -> list[torch.Tensor]:
            for a, idx in tables:
                x = torch.index_select(x, a, idx)
            return [x]

        return nearest
    dt = node.in_type
    if dt in ("float32", "float16"):
        fl, fdt = node.acc, torch.float32
        steps = []
        for a in reversed(axes):
            lo, hi, r, den = linear_weights(xs[a], out[a])
            shape = _shape_along(4, a, out[a])
            steps.append((a, ctx.tensor(lo), ctx.tensor(hi),
                          ctx.tensor(((den - r) / den).reshape(shape), fdt),
                          ctx.tensor((r / den).reshape(shape), fdt)))

        def linear(x: torch.Tensor) -> list[torch.Tensor]:
            x = fl(x)
            for a, lo_i, hi_i, w0, w1 in steps:
                x = torch.index_select(x, a, lo_i) * w0 + torch.index_select(x, a, hi_i) * w1
            return [x]

        return linear
    # Integer types: exact numerators in int64, one round half to even at the end.
    int_steps = []
    total = 1
    for a in reversed(axes):
        lo, hi, r, den = linear_weights(xs[a], out[a])
        rr = r.reshape(_shape_along(4, a, out[a]))
        int_steps.append((a, ctx.tensor(lo), ctx.tensor(hi), ctx.tensor(den - rr),
                          ctx.tensor(rr)))
        total *= den
    info = np.iinfo(np.dtype(dt))

    def linear_int(x: torch.Tensor) -> list[torch.Tensor]:
        y = x.to(torch.int64)
        for a, lo_i, hi_i, w0, w1 in int_steps:
            y = torch.index_select(y, a, lo_i) * w0 + torch.index_select(y, a, hi_i) * w1
        q = torch.div(y, total, rounding_mode="floor")
        rem = y - q * total
        up = (2 * rem > total) | ((2 * rem == total) & (q % 2 == 1))
        return [torch.clamp(q + up.to(torch.int64), int(info.min), int(info.max))]

    return linear_int
