"""ONNX RoiAlign (10, 16: coordinate_transformation_mode, 22) -> element-wise coordinate
arithmetic + matmul (avg) or gather (max). The rois and batch_indices may be computed at run
time: every sampling coordinate is computed in the graph (float32; a float16 input is
sampled in float32 and cast back).

Per ROI r and axis (y: rows, output_height P; x: columns, output_width Q), as ONNX and
onnxruntime compute them: start = c1·spatial_scale - o, end = c2·spatial_scale - o (o = 0.5
for half_pixel, 0 for output_half_pixel), length = end - start (at least 1 for
output_half_pixel), bin = length / P, grid g = sampling_ratio or ceil(bin); sample iy of bin
p sits at (start + p·bin) + (iy + 0.5)·bin / g. A sample is dropped (weight 0) when y < -1
or y > H (or x outside [-1, W]); otherwise y is clamped to [0, H - 1] and read bilinearly.

- avg: bilinear weights are separable, so the average is A_y · X[b] · A_xᵀ with A_y[r, p, h]
  = Σ_iy hat(clamp(y) - h) · valid / count (count = max(g_y·g_x, 1)): two batched matmuls.
  With sampling_ratio 0 and rois computed at run time the grid size is data dependent: the
  samples are enumerated from the first one that can lie in [-1, H] (computed in the graph),
  H + 5 per bin on y (W + 5 on x), which covers every sample that can be in range; samples
  beyond the grid or outside the map get weight 0, so the result is exact.
- max: ONNX takes, per sample, the maximum of the four weighted corners w·X (a corner of
  weight 0 gives 0; a dropped sample gives 0), then the maximum over the samples: one
  gather per corner and sample.
Restrictions: float32/float16 X and rois; 4-D X. mode = "max" with sampling_ratio = 0 needs
constant rois (the grid size is then known at conversion time); max mode takes at most
256 samples per bin.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import const_or_none
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import float_dtype_check

_MAX_SAMPLES = 256
"""Most samples per output bin (g_y·g_x) the max mode unrolls."""


class _Axis:
    """Sampling coordinates of one axis (y or x) of every ROI, as float32 operands."""

    def __init__(self, ctx: ImportContext, rois: Any, lo: int, hi: int, bins: int, size: int,
                 scale: float, half_pixel: bool, ratio: int, grid: int | None) -> None:
        """`grid`: the static number of samples per bin to enumerate (None: data dependent,
        sampling_ratio 0 with rois computed at run time)."""
        self.ctx = ctx
        b = ctx.builder
        self.b = b
        n = rois.shape[0]
        self.size = size
        self.bins = bins
        c1 = b.slice(rois, [0, lo], [n, 1])  # [R, 1]
        c2 = b.slice(rois, [0, hi], [n, 1])
        off = self.c(0.5 if half_pixel else 0.0)
        start = b.sub(b.mul(c1, self.c(scale)), off)
        end = b.sub(b.mul(c2, self.c(scale)), off)
        length = b.sub(end, start)
        if not half_pixel:
            length = b.max(length, self.c(1.0))
        self.bin = b.div(length, self.c(float(bins)))  # [R, 1]
        # g: float32 [R, 1] (exact small integers)
        self.g = self.c(float(ratio)) if ratio > 0 else b.ceil(self.bin)
        p = self.ctx.constant(np.arange(bins, dtype=np.float32).reshape(1, bins))
        self.base = b.add(start, b.mul(p, self.bin))  # [R, P]
        self.ratio = ratio
        self.grid = grid
        self.n = n

    def c(self, value: float) -> Any:
        return self.ctx.constant(np.asarray(value, dtype=np.float32))

    def samples(self) -> tuple[Any, Any]:
        """(y, keep): sample coordinates [R, P, G] and whether each one counts (inside the
        grid and inside [-1, size]; y may be NaN for an empty ROI, where keep is false)."""
        b = self.b
        n, bins = self.n, self.bins
        bin3 = b.reshape(self.bin, [n, 1, 1])
        g3 = self.g if self.ratio > 0 else b.reshape(self.g, [n, 1, 1])
        base3 = b.reshape(self.base, [n, bins, 1])
        if self.grid is not None:
            count = self.grid
            iy = self.ctx.constant(np.arange(count, dtype=np.float32).reshape(1, 1, count))
        else:
            # first sample index that can be >= -1 (one earlier for rounding), then a
            # window of size + 5 samples: at most size + 3 samples of a bin lie in [-1, size]
            count = self.size + 5
            step = b.div(bin3, g3)
            first = b.sub(b.div(b.sub(self.c(-1.0), base3), step), self.c(0.5))
            i0 = b.max(b.sub(b.ceil(first), self.c(1.0)), self.c(0.0))  # [R, P, 1]
            # a zero step (empty ROI, g = 0) gives inf/nan: no sample is used then anyway
            i0 = b.where(b.is_nan(i0), self.c(0.0), b.min(i0, self.c(float(2 ** 24))))
            ar = self.ctx.constant(np.arange(count, dtype=np.float32).reshape(1, 1, count))
            iy = b.add(i0, ar)  # [R, P, G]
        y = b.add(base3, b.div(b.mul(b.add(iy, self.c(0.5)), bin3), g3))
        keep = b.logical_and(b.greater_or_equal(y, self.c(-1.0)),
                             b.lesser_or_equal(y, self.c(float(self.size))))
        if self.ratio == 0:
            keep = b.logical_and(keep, b.lesser(iy, g3))
        return y, keep

    def clamped(self, y: Any) -> Any:
        b = self.b
        return b.min(b.max(y, self.c(0.0)), self.c(float(self.size - 1)))

    def avg_weights(self) -> Any:
        """Σ over samples of the bilinear (hat) weights: [R, P, size]."""
        b = self.b
        y, keep = self.samples()
        yc = b.reshape(self.clamped(y), [*y.shape, 1])
        h = self.ctx.constant(np.arange(self.size, dtype=np.float32).reshape(1, 1, 1, -1))
        hat = b.max(b.sub(self.c(1.0), b.abs(b.sub(yc, h))), self.c(0.0))
        hat = b.where(b.reshape(keep, [*keep.shape, 1]), hat, self.c(0.0))
        return b.reduce_sum(hat, axes=[2])

    def corners(self) -> list[list[tuple[Any, Any]]]:
        """Per static sample iy: [(low index, weight), (high index, weight)] as int32 /
        float32 [R, P] (weights 0 for a dropped sample)."""
        b = self.b
        y, keep = self.samples()
        yc = self.clamped(y)
        low = b.floor(yc)
        high = b.min(b.add(low, self.c(1.0)), self.c(float(self.size - 1)))
        ly = b.where(keep, b.sub(yc, low), self.c(0.0))
        hy = b.where(keep, b.sub(self.c(1.0), b.sub(yc, low)), self.c(0.0))
        low = b.where(keep, low, self.c(0.0))  # NaN coordinates of empty ROIs
        high = b.where(keep, high, self.c(0.0))
        low_i, high_i = b.cast(low, "int32"), b.cast(high, "int32")
        assert self.grid is not None
        out = []
        for i in range(self.grid):
            def at(t: Any, i: int = i) -> Any:
                return b.reshape(b.slice(t, [0, 0, i], [self.n, self.bins, 1]),
                                 [self.n, self.bins])
            out.append([(at(low_i), at(hy)), (at(high_i), at(ly))])
        return out

    def grid_count(self) -> Any:
        """g per ROI as float32 [R, 1] (or a scalar for a fixed sampling_ratio)."""
        return self.g


def _static_grid(rois: np.ndarray, lo: int, hi: int, bins: int, scale: float,
                 half_pixel: bool) -> int:
    """Largest ceil(bin) over constant rois, in float32 exactly as the graph computes it."""
    r = np.asarray(rois, dtype=np.float32)
    f = np.float32
    off = f(0.5 if half_pixel else 0.0)
    start = r[:, lo] * f(scale) - off
    end = r[:, hi] * f(scale) - off
    length = end - start
    if not half_pixel:
        length = np.maximum(length, f(1.0))
    with np.errstate(invalid="ignore"):
        g = np.ceil(length / f(bins))
    g = g[np.isfinite(g)]
    return max(int(g.max()) if g.size else 1, 1)


@onnx_op("RoiAlign", since=10)
def roi_align(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x, rois, batch = ctx.inputs(node)
    float_dtype_check(node, x, "X")
    float_dtype_check(node, rois, "rois")
    a = node.attrs
    mode = str(a.get("mode", "avg"))
    if mode not in ("avg", "max"):
        raise UnsupportedAttribute(f"RoiAlign mode {mode!r} is unknown (avg or max)")
    ctm = str(a.get("coordinate_transformation_mode", "output_half_pixel"))
    if ctm not in ("half_pixel", "output_half_pixel"):
        raise UnsupportedAttribute(f"RoiAlign coordinate_transformation_mode {ctm!r} is "
                                   "unknown (half_pixel or output_half_pixel)")
    half_pixel = ctm == "half_pixel"
    ph, pw = int(a.get("output_height", 1)), int(a.get("output_width", 1))
    ratio = int(a.get("sampling_ratio", 0))
    scale = float(a.get("spatial_scale", 1.0))
    if ph < 1 or pw < 1 or ratio < 0:
        raise InvalidModel(f"RoiAlign output {ph}x{pw} and sampling_ratio {ratio} must be "
                           "positive (sampling_ratio may be 0)")
    if x.rank != 4:
        raise UnsupportedAttribute(f"RoiAlign X must be 4-D [N, C, H, W], got rank {x.rank}")
    if rois.rank != 2 or rois.shape[1] != 4 or batch.rank != 1 or \
            batch.shape[0] != rois.shape[0]:
        raise InvalidModel(f"RoiAlign rois {list(rois.shape)} and batch_indices "
                           f"{list(batch.shape)} must be [R, 4] and [R]")
    nb, c, h, w = x.shape
    r = rois.shape[0]
    const_rois = const_or_none(ctx, node.inputs[1])
    if ratio > 0:
        grid_y: int | None = ratio
        grid_x: int | None = ratio
    elif const_rois is not None:
        grid_y = _static_grid(const_rois, 1, 3, ph, scale, half_pixel)
        grid_x = _static_grid(const_rois, 0, 2, pw, scale, half_pixel)
    elif mode == "max":
        raise UnsupportedAttribute(
            "RoiAlign mode 'max' with sampling_ratio 0 needs constant rois (the number of "
            "samples per bin depends on the ROI sizes)",
            hint="set sampling_ratio > 0 or make the rois a constant")
    else:
        grid_y = grid_x = None
    dt = x.data_type
    xf = b.cast(x, "float32") if dt != "float32" else x
    rf = b.cast(rois, "float32") if rois.data_type != "float32" else rois
    ay = _Axis(ctx, rf, 1, 3, ph, h, scale, half_pixel, ratio, grid_y)
    ax = _Axis(ctx, rf, 0, 2, pw, w, scale, half_pixel, ratio, grid_x)
    if mode == "avg":
        cnt = b.max(b.mul(ay.grid_count(), ax.grid_count()), ay.c(1.0))  # [R, 1] or scalar
        if cnt.rank:
            cnt = b.reshape(cnt, [r, 1, 1])
        wy = b.div(ay.avg_weights(), cnt)  # [R, P, H]
        wx = ax.avg_weights()  # [R, Q, W]
        if nb == 1:
            xb = xf  # [1, C, H, W] broadcasts over the ROIs
        else:
            xb = b.gather(xf, batch, axis=0)  # [R, C, H, W]
        t = b.matmul(b.reshape(wy, [r, 1, ph, h]), xb)  # [R, C, P, W]
        y = b.matmul(t, b.reshape(b.transpose(wx, permutation=[0, 2, 1]), [r, 1, w, pw]))
    else:
        assert grid_y is not None and grid_x is not None
        if grid_y * grid_x > _MAX_SAMPLES:
            raise UnsupportedAttribute(
                f"RoiAlign mode 'max' with {grid_y}x{grid_x} samples per bin exceeds "
                f"{_MAX_SAMPLES}", hint="set a smaller sampling_ratio")
        y = _max_mode(ctx, xf, batch, ay, ax, grid_y, grid_x)
    return [b.cast(y, dt) if dt != "float32" else y]


def _max_mode(ctx: ImportContext, xf: Any, batch: Any, ay: _Axis, ax: _Axis, grid_y: int,
              grid_x: int) -> Any:
    b = ctx.builder
    nb, c, h, w = xf.shape
    r, ph, pw = ay.n, ay.bins, ax.bins
    flat = b.reshape(b.transpose(xf, permutation=[1, 0, 2, 3]), [c, nb * h * w])
    base = None
    if nb > 1:
        bi = b.cast(batch, "int32")
        base = b.reshape(b.mul(bi, ctx.constant(np.asarray(h * w, dtype=np.int32))),
                         [r, 1, 1])
    width = ctx.constant(np.asarray(w, dtype=np.int32))
    ys, xs = ay.corners(), ax.corners()
    if ay.ratio == 0:
        gy, gx = b.reshape(ay.g, [r, 1]), b.reshape(ax.g, [r, 1])
    acc: Any = ctx.constant(np.full((1, 1, 1, 1), -np.inf, dtype=np.float32))
    for iy in range(grid_y):
        for ix in range(grid_x):
            best = None
            for yi, wy in ys[iy]:
                for xi, wx in xs[ix]:
                    idx = b.add(b.reshape(b.mul(yi, width), [r, ph, 1]),
                                b.reshape(xi, [r, 1, pw]))
                    if base is not None:
                        idx = b.add(idx, base)
                    v = b.gather(flat, idx, axis=1)  # [C, R, P, Q]
                    wgt = b.mul(b.reshape(wy, [1, r, ph, 1]), b.reshape(wx, [1, r, 1, pw]))
                    v = b.mul(v, wgt)
                    best = v if best is None else b.max(best, v)
            assert best is not None
            if ay.ratio == 0:  # samples beyond this ROI's grid do not count
                inside = b.logical_and(
                    b.lesser(ay.c(float(iy)), gy), b.lesser(ax.c(float(ix)), gx))
                best = b.where(b.reshape(inside, [1, r, 1, 1]), best, ay.c(-np.inf))
            acc = b.max(acc, best)
    if ay.ratio == 0:  # no sample at all (an empty ROI): 0, as ONNX's initial value
        has = b.logical_and(b.greater(gy, ay.c(0.0)), b.greater(gx, ay.c(0.0)))
        acc = b.where(b.reshape(has, [1, r, 1, 1]), acc, ay.c(0.0))
    return b.transpose(acc, permutation=[1, 0, 2, 3])
