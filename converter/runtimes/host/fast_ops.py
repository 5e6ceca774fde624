"""Ops of the host steps' evaluator that onnx's reference implementation runs in Python loops,
vectorized with numpy (`FAST_OPS`, passed as `ReferenceEvaluator(..., new_ops=FAST_OPS)`):
a detector's post-processing (torchvision's SSDlite: 180 GatherND, an NMS over 27000
candidate boxes) took minutes, and takes about a second so.

`GatherND`: onnx's semantics (`batch_dims`, negative indices counted from the end; an index
out of range raises).

`ScatterElements`: onnx's semantics (negative indices; `reduction` none, add, mul, max, min;
with "none", of updates to one element the last wins).

`RoiAlign` in "avg" mode: onnx's sampling (half_pixel / output_half_pixel, adaptive or fixed
`sampling_ratio`, samples outside [-1, size] count zero, clamped bilinear corners) written
as separable weights, out = Ay · X · Axᵀ / count per region, in float64 like onnx's (a
float32 rounding apart from onnxruntime's); "max" mode is onnx's own.

`NonMaxSuppression` keeps the semantics of onnx's `op_non_max_suppression` exactly: per batch and class, candidates over `score_threshold` (when given) in
descending score order, ties by ascending box index; a candidate is kept unless a kept box of
its class overlaps it with IoU > `iou_threshold`; at most `max_output_boxes_per_class` per
class; boxes as [y1, x1, y2, x2] corners in any order (`center_point_box` 0) or [x_center,
y_center, width, height] (1); the arithmetic in the boxes' data type, with onnx's early
outs (no overlap, a non-positive area or union: not suppressed). Output: int64
[selected, 3] of (batch, class, box), by batch, class, then selection order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx.reference.op_run import OpRun
from onnx.reference.ops.op_roi_align import RoiAlign as _ReferenceRoiAlign


def _corners(boxes: np.ndarray, center_point_box: int) -> tuple[np.ndarray, ...]:
    """(x_min, x_max, y_min, y_max, area) per box, as onnx's reference computes them."""
    if center_point_box == 0:
        x_min, x_max = np.minimum(boxes[:, 1], boxes[:, 3]), np.maximum(boxes[:, 1], boxes[:, 3])
        y_min, y_max = np.minimum(boxes[:, 0], boxes[:, 2]), np.maximum(boxes[:, 0], boxes[:, 2])
    else:
        half_w, half_h = boxes[:, 2] / 2, boxes[:, 3] / 2
        x_min, x_max = boxes[:, 0] - half_w, boxes[:, 0] + half_w
        y_min, y_max = boxes[:, 1] - half_h, boxes[:, 1] + half_h
    return x_min, x_max, y_min, y_max, (x_max - x_min) * (y_max - y_min)


def _suppressed(c: tuple[np.ndarray, ...], a: Any, b: np.ndarray, iou: Any) -> np.ndarray:
    """Whether box `a` (an index, or indices paired with `b`) suppresses box `b` (onnx's
    `suppress_by_iou`, which is symmetric)."""
    x_min, x_max, y_min, y_max, area = c
    ix_min, ix_max = np.maximum(x_min[b], x_min[a]), np.minimum(x_max[b], x_max[a])
    iy_min, iy_max = np.maximum(y_min[b], y_min[a]), np.minimum(y_max[b], y_max[a])
    with np.errstate(all="ignore"):
        inter = (ix_max - ix_min) * (iy_max - iy_min)
        union = area[b] + area[a] - inter
        hit = ((ix_max > ix_min) & (iy_max > iy_min) & (inter > 0) & (area[b] > 0)
               & (area[a] > 0) & (union > 0) & (inter / union > iou))
    return np.asarray(hit, dtype=bool)


MAX_PAIRS = 1 << 24
"""The most box pairs overlapping along x that `_select` examines at once; beyond, it
suppresses box by box."""


def _select(boxes: np.ndarray, scores: np.ndarray, most: int, iou: Any, threshold: Any,
            center_point_box: int) -> list[int]:
    """The kept box indices of one batch and class, in selection order."""
    candidates = np.arange(scores.shape[0])
    if threshold is not None:
        candidates = candidates[scores > threshold]
    order = candidates[np.argsort(-scores[candidates], kind="stable")]
    c = tuple(v[order] for v in _corners(boxes, center_point_box))  # by rank
    n = order.size
    if n == 0 or most == 0:
        return []
    # the pairs that overlap along x: in x_min order, each box with those starting in it
    by_x = np.argsort(c[0], kind="stable")
    starts = np.arange(1, n + 1)
    ends = np.searchsorted(c[0][by_x], c[1][by_x], side="left")
    counts = np.maximum(ends - starts, 0)
    total = int(counts.sum())
    if total > MAX_PAIRS:
        return _select_one_by_one(c, order, most, iou)
    first = np.repeat(np.arange(n), counts)
    offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    a, b = by_x[first], by_x[starts[first] + offsets]
    hit = _suppressed(c, a, b, iou)
    a, b = a[hit], b[hit]
    src, dst = np.minimum(a, b), np.maximum(a, b)  # the better-ranked box suppresses
    sort = np.argsort(src, kind="stable")
    src, dst = src[sort], dst[sort]
    bounds = np.searchsorted(src, np.arange(n + 1))
    alive = np.ones(n, dtype=bool)
    kept: list[int] = []
    for rank in range(n):
        if not alive[rank]:
            continue
        kept.append(int(order[rank]))
        if len(kept) >= most:
            break
        lo, hi = bounds[rank], bounds[rank + 1]
        if hi > lo:
            alive[dst[lo:hi]] = False
    return kept


def _select_one_by_one(c: tuple[np.ndarray, ...], order: np.ndarray, most: int, iou: Any
                       ) -> list[int]:
    """`_select` for boxes ranked `c`, comparing each kept box with the remaining ones."""
    rest = np.arange(order.size)
    kept: list[int] = []
    while rest.size and len(kept) < most:
        k = int(rest[0])
        kept.append(int(order[k]))
        rest = rest[1:]
        rest = rest[~_suppressed(c, k, rest, iou)]
    return kept


class GatherND(OpRun):
    """onnx's `GatherND`, vectorized (see the module docstring)."""

    op_domain = ""

    def _run(self, data: np.ndarray, indices: np.ndarray, batch_dims: int | None = None
             ) -> tuple[np.ndarray]:
        b = int(batch_dims or 0)
        k = indices.shape[-1]
        batch = int(np.prod(data.shape[:b], dtype=np.int64))
        flat_data = data.reshape((batch, *data.shape[b:]))
        flat_idx = indices.reshape((batch, *indices.shape[b:]))
        which = np.arange(batch).reshape((batch,) + (1,) * (flat_idx.ndim - 2))
        picked = flat_data[(which, *(flat_idx[..., i] for i in range(k)))]
        return (picked.reshape(indices.shape[:-1] + data.shape[b + k:]),)


class NonMaxSuppression(OpRun):
    """onnx's `NonMaxSuppression`, vectorized (see the module docstring)."""

    op_domain = ""

    def _run(self, boxes: np.ndarray, scores: np.ndarray,
             max_output_boxes_per_class: np.ndarray | None = None,
             iou_threshold: np.ndarray | None = None,
             score_threshold: np.ndarray | None = None,
             center_point_box: int | None = None) -> tuple[np.ndarray]:
        most = 0
        if max_output_boxes_per_class is not None and max_output_boxes_per_class.size:
            most = max(int(max_output_boxes_per_class.reshape(-1)[0]), 0)
        iou = iou_threshold.reshape(-1)[0] if iou_threshold is not None \
            and iou_threshold.size else 0
        threshold = score_threshold.reshape(-1)[0] if score_threshold is not None \
            and score_threshold.size else None
        rows: list[tuple[int, int, int]] = []
        for b in range(boxes.shape[0]):
            for cls in range(scores.shape[1]):
                rows += [(b, cls, k) for k in _select(boxes[b], scores[b, cls], most, iou,
                                                      threshold, int(center_point_box or 0))]
        return (np.array(rows, dtype=np.int64).reshape(-1, 3),)


class ScatterElements(OpRun):
    """onnx's `ScatterElements`, vectorized (see the module docstring)."""

    op_domain = ""

    def _run(self, data: np.ndarray, indices: np.ndarray, updates: np.ndarray,
             axis: int | None = None, reduction: str | None = None) -> tuple[np.ndarray]:
        axis = int(axis or 0) % max(data.ndim, 1)
        where = np.where(indices < 0, indices + data.shape[axis], indices)
        grid: list[Any] = list(np.indices(indices.shape, sparse=True))
        grid[axis] = where
        index = tuple(grid)
        out = np.array(data, copy=True)
        ufunc = {"add": np.add, "mul": np.multiply, "max": np.maximum,
                 "min": np.minimum}.get(reduction or "none")
        if ufunc is None:
            out[index] = updates
        else:
            ufunc.at(out, index, updates)
        return (out,)


def _axis_weights(start: np.ndarray, bins: np.ndarray, grid: np.ndarray, pooled: int,
                  size: int) -> np.ndarray:
    """[rois, pooled, size]: the summed bilinear weights of each output row (column) over
    its grid samples along one axis, as onnx's RoiAlign takes them (a sample outside
    [-1, size] weighs nothing)."""
    rois = start.shape[0]
    most = int(grid.max()) if rois else 0
    p = np.arange(pooled).reshape(1, pooled, 1)
    i = np.arange(max(most, 1)).reshape(1, 1, -1)
    g = grid.reshape(-1, 1, 1).astype(np.float64)
    pos = start.reshape(-1, 1, 1) + p * bins.reshape(-1, 1, 1) \
        + (i + 0.5) * bins.reshape(-1, 1, 1) / np.maximum(g, 1)
    used = (i < grid.reshape(-1, 1, 1)) & ~((pos < -1.0) | (pos > size))
    pos = np.maximum(pos, 0)
    low = np.floor(pos).astype(np.int64)
    edge = low >= size - 1
    low = np.where(edge, size - 1, low)
    high = np.where(edge, size - 1, low + 1)
    frac = np.where(edge, 0.0, pos - low)
    weights = np.zeros((rois, pooled, size))
    r = np.broadcast_to(np.arange(rois).reshape(-1, 1, 1), pos.shape)
    q = np.broadcast_to(p, pos.shape)
    np.add.at(weights, (r[used], q[used], low[used]), (1.0 - frac)[used])
    np.add.at(weights, (r[used], q[used], high[used]), frac[used])
    return weights


class RoiAlign(_ReferenceRoiAlign):
    """onnx's `RoiAlign`, "avg" mode vectorized (see the module docstring)."""

    op_domain = ""

    def _run(self, X: np.ndarray, rois: np.ndarray, batch_indices: np.ndarray,
             coordinate_transformation_mode: str | None = None, mode: str | None = None,
             output_height: int | None = None, output_width: int | None = None,
             sampling_ratio: int | None = None, spatial_scale: float | None = None
             ) -> tuple[np.ndarray]:
        own = vars(self)  # the node's attributes with the schema defaults (set by OpRun)
        transform = coordinate_transformation_mode or own["coordinate_transformation_mode"]
        mode = mode or own["mode"]
        if mode.lower() != "avg":
            return super()._run(  # type: ignore[no-any-return,no-untyped-call]
                X, rois, batch_indices, coordinate_transformation_mode, mode, output_height,
                output_width, sampling_ratio, spatial_scale)
        out_h = int(output_height or own["output_height"])
        out_w = int(output_width or own["output_width"])
        ratio = int(sampling_ratio or own["sampling_ratio"])
        scale = float(spatial_scale or own["spatial_scale"])
        half = transform.lower() == "half_pixel"
        boxes = rois.astype(np.float64) * scale - (0.5 if half else 0.0)
        width, height = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
        if not half:
            width, height = np.maximum(width, 1.0), np.maximum(height, 1.0)
        bin_h, bin_w = height / out_h, width / out_w
        grid_h = np.full(len(boxes), ratio) if ratio > 0 else np.ceil(height / out_h)
        grid_w = np.full(len(boxes), ratio) if ratio > 0 else np.ceil(width / out_w)
        grid_h, grid_w = grid_h.astype(np.int64), grid_w.astype(np.int64)
        ay = _axis_weights(boxes[:, 1], bin_h, grid_h, out_h, X.shape[2])
        ax = _axis_weights(boxes[:, 0], bin_w, grid_w, out_w, X.shape[3])
        count = np.maximum(grid_h * grid_w, 1).astype(np.float64)
        out = np.empty((len(boxes), X.shape[1], out_h, out_w))
        for b in np.unique(batch_indices):
            for chunk in np.array_split(np.flatnonzero(batch_indices == b),
                                        max(1, len(boxes) // 64)):
                if chunk.size:
                    rows = np.einsum("nph,chw->ncpw", ay[chunk], X[int(b)].astype(np.float64))
                    out[chunk] = np.einsum("ncpw,nqw->ncpq", rows, ax[chunk]) \
                        / count[chunk].reshape(-1, 1, 1, 1)
        return (out.astype(X.dtype),)


FAST_OPS = [GatherND, NonMaxSuppression, RoiAlign, ScatterElements]
"""The replacements, for `ReferenceEvaluator(new_ops=...)`."""
