"""ONNX GridSample (16: 2-D; 20+: 2-D and 3-D "volumetric") -> element-wise coordinate
arithmetic + gatherElements (the grid is a tensor computed at run time).

Per spatial axis i of size L (grid component D-1-i, x first as in ONNX):
- denormalise g: align_corners ? (g + 1)/2·(L - 1) : ((g + 1)·L - 1)/2; nearest rounds it
  half to even (roundEven, as the ONNX reference and PyTorch do);
- coordinates outside [lo, hi] ([0, L - 1] with align_corners, else [-0.5, L - 0.5]) are
  clamped to [0, L - 1] (border) or reflected into [lo, hi] (reflection); zeros keeps them.
  Cubic with border clamps only the tap indices, not the coordinate: this follows
  onnxruntime and PyTorch; the ONNX reference clamps the coordinate first, which differs for
  coordinates within 2 cells outside the input (no node test covers cubic + border);
- taps: nearest 1 (trunc of the coordinate), linear 2 (floor, floor + 1; weights 1 - t, t),
  cubic 4 (floor - 1 .. floor + 2; Keys coefficients with alpha = -0.75); a tap index outside
  [0, L) reads 0 (zeros: the tap's weight is masked), the border pixel (border) or its
  reflection (reflection).
The taps of all axes combine as a tensor product: for each tap combination the linear
index Σ index_i·stride_i indexes the input flattened to [N, C, P] with gatherElements
(indices broadcast over C), times the product of the per-axis weights; the products are
summed. Coordinates and weights are float32 (a float16 input is sampled in float32 and cast
back).
Restrictions: float32/float16 input; 2-D or 3-D spatial; cubic on 3-D builds 64 gathers.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import float_dtype_check

_MODES = {"bilinear": "linear", "linear": "linear", "nearest": "nearest", "bicubic": "cubic",
          "cubic": "cubic"}
_ALPHA = -0.75


class _F:
    """float32 helpers."""

    def __init__(self, ctx: ImportContext) -> None:
        self.ctx = ctx
        self.b = ctx.builder

    def c(self, value: float) -> Any:
        return self.ctx.constant(np.asarray(value, dtype=np.float32))

    def clamp(self, v: Any, lo: float, hi: float) -> Any:
        return self.b.min(self.b.max(v, self.c(lo)), self.c(hi))

    def reflect(self, v: Any, lo: float, hi: float) -> Any:
        """Reflect v by the nearer border until it lies in [lo, hi] (ONNX _gs_reflect)."""
        b = self.b
        rng = hi - lo
        if rng <= 0:
            return b.mul(v, self.c(0.0))  # one cell: every coordinate is 0
        below = b.lesser(v, self.c(lo))
        above = b.greater(v, self.c(hi))
        dx = b.where(below, b.sub(self.c(lo), v), b.sub(v, self.c(hi)))
        n = b.floor(b.div(dx, self.c(rng)))
        r = b.sub(dx, b.mul(n, self.c(rng)))
        odd = b.not_equal(b.sub(n, b.mul(b.floor(b.mul(n, self.c(0.5))), self.c(2.0))),
                          self.c(0.0))
        from_lo, from_hi = b.add(self.c(lo), r), b.sub(self.c(hi), r)
        reflected = b.where(below, b.where(odd, from_hi, from_lo),
                            b.where(odd, from_lo, from_hi))
        return b.where(b.logical_or(below, above), reflected, v)

    def cubic(self, t: Any) -> list[Any]:
        """Keys cubic convolution weights of the taps at -1, 0, 1, 2 for offset t in [0, 1)."""
        b = self.b
        a = _ALPHA

        def far(s: Any) -> Any:  # |s| in [1, 2): ((a·s - 5a)·s + 8a)·s - 4a
            return b.sub(b.mul(b.add(b.mul(b.sub(b.mul(s, self.c(a)), self.c(5 * a)), s),
                                     self.c(8 * a)), s), self.c(4 * a))

        def near(s: Any) -> Any:  # |s| in [0, 1]: ((a + 2)·s - (a + 3))·s² + 1
            return b.add(b.mul(b.sub(b.mul(s, self.c(a + 2)), self.c(a + 3)), b.mul(s, s)),
                         self.c(1.0))

        one_minus = b.sub(self.c(1.0), t)
        return [far(b.add(t, self.c(1.0))), near(t), near(one_minus),
                far(b.sub(self.c(2.0), t))]


def _axis_taps(f: _F, g: Any, size: int, mode: str, padding: str, align: bool
               ) -> list[tuple[Any, Any]]:
    """(int32 index, float32 weight or None) per tap along one axis; indices are in range,
    weights include the zeros-padding mask."""
    b = f.b
    if align:
        v = b.mul(b.add(g, f.c(1.0)), f.c((size - 1) / 2.0))
        lo, hi = 0.0, float(size - 1)
    else:
        v = b.div(b.sub(b.mul(b.add(g, f.c(1.0)), f.c(float(size))), f.c(1.0)), f.c(2.0))
        lo, hi = -0.5, size - 0.5
    if mode == "nearest":
        v = b.round_even(v)
    if padding == "border" and mode != "cubic":
        outside = b.logical_or(b.lesser(v, f.c(lo)), b.greater(v, f.c(hi)))
        v = b.where(outside, f.clamp(v, 0.0, size - 1.0), v)
    elif padding == "reflection":
        v = f.reflect(v, lo, hi)
    weights: list[MLOperand | None]
    if mode == "nearest":
        base = b.where(b.lesser(v, f.c(0.0)), b.ceil(v), b.floor(v))  # int() truncation
        offsets, weights = [0], [None]
    else:
        base = b.floor(v)
        t = b.sub(v, base)
        if mode == "linear":
            offsets, weights = [0, 1], [b.sub(f.c(1.0), t), t]
        else:
            offsets, weights = [-1, 0, 1, 2], f.cubic(t)
    taps = []
    for off, w in zip(offsets, weights, strict=True):
        idx = b.add(base, f.c(float(off))) if off else base
        if padding == "zeros":
            inside = b.logical_and(b.greater_or_equal(idx, f.c(0.0)),
                                   b.lesser(idx, f.c(float(size))))
            mask = b.cast(inside, "float32")
            w = mask if w is None else b.mul(w, mask)
        elif padding == "reflection":
            idx = f.reflect(idx, lo, hi)
            idx = b.where(b.lesser(idx, f.c(0.0)), b.ceil(idx), b.floor(idx))
        idx = f.clamp(idx, 0.0, size - 1.0)
        taps.append((b.cast(idx, "int32"), w))
    return taps


def grid_sample(ctx: ImportContext, node: Node, x: Any, grid: Any, mode: str, padding: str,
                align: bool) -> Any:
    b = ctx.builder
    f = _F(ctx)
    d = x.rank - 2
    n, c = x.shape[0], x.shape[1]
    spatial = list(x.shape[2:])
    out = list(grid.shape[1:-1])
    if grid.rank != x.rank or grid.shape[0] != n or grid.shape[-1] != d:
        raise InvalidModel(f"GridSample grid shape {list(grid.shape)} does not match input "
                           f"{list(x.shape)} (expected [N, *out, {d}])")
    q = int(np.prod(out, dtype=np.int64))
    p = int(np.prod(spatial, dtype=np.int64))
    dt = x.data_type
    xf = b.cast(x, "float32") if dt != "float32" else x
    gf = b.cast(grid, "float32") if grid.data_type != "float32" else grid
    flat = b.reshape(xf, [n, c, p])
    gq = b.reshape(gf, [n, q, d])
    per_axis = []
    for i in range(d):
        k = d - 1 - i  # grid component: x (last axis) first
        g = b.reshape(b.slice(gq, [0, 0, k], [n, q, 1]), [n, 1, q])
        per_axis.append(_axis_taps(f, g, spatial[i], mode, padding, align))
    strides = [int(np.prod(spatial[i + 1:], dtype=np.int64)) for i in range(d)]
    total = None
    for combo in itertools.product(*per_axis):
        lin = None
        weight = None
        for i, (idx, w) in enumerate(combo):
            term = idx if strides[i] == 1 else b.mul(
                idx, ctx.constant(np.asarray(strides[i], dtype=np.int32)))
            lin = term if lin is None else b.add(lin, term)
            if w is not None:
                weight = w if weight is None else b.mul(weight, w)
        assert lin is not None
        idx_c = b.expand(lin, [n, c, q]) if c != 1 else lin
        val = b.gather_elements(flat, idx_c, axis=2)
        if weight is not None:
            val = b.mul(val, weight)
        total = val if total is None else b.add(total, val)
    assert total is not None
    y = b.reshape(total, [n, c, *out])
    return b.cast(y, dt) if dt != "float32" else y


def _handler(ctx: ImportContext, node: Node) -> Outputs:
    x, grid = ctx.inputs(node)
    float_dtype_check(node, x)
    float_dtype_check(node, grid, "grid")
    raw = str(node.attrs.get("mode", "linear"))
    if raw not in _MODES:
        raise UnsupportedAttribute(f"GridSample mode {raw!r} is unknown")
    padding = str(node.attrs.get("padding_mode", "zeros"))
    if padding not in ("zeros", "border", "reflection"):
        raise UnsupportedAttribute(f"GridSample padding_mode {padding!r} is unknown")
    if x.rank not in (4, 5):
        raise UnsupportedAttribute(f"GridSample on a rank-{x.rank} input is not supported "
                                   "(2-D or 3-D spatial)")
    return [grid_sample(ctx, node, x, grid, _MODES[raw], padding,
                        bool(node.attrs.get("align_corners", 0)))]


@onnx_op("GridSample", since=16)
def grid_sample16(ctx: ImportContext, node: Node) -> Outputs:
    return _handler(ctx, node)
