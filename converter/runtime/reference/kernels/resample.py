"""Reference kernel: resample2d (spec half-pixel mapping).

For each resampled axis with input size n and output size m (scale = m / n):
src = clamp((dst + 0.5) / scale - 0.5, 0, n - 1).
- nearest-neighbor: index ceil(src - 0.5) (round half down), computed exactly in integers;
  values are copied, never converted. Equals ONNX Resize half_pixel + round_prefer_floor.
- linear: v0 = floor(src), v1 = ceil(src), t = src - v0, result v0·(1 - t) + v1·t,
  interpolated along the second axis first, then the first (the spec's x, then y), in
  float64. Integer outputs are rounded half to even and saturated to the type range.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....webnn.operand import Operation
from ..registry import kernel


def nearest_indices(n: int, m: int) -> np.ndarray:
    """ceil(clamp((dst + 0.5)·n/m - 0.5, 0, n - 1) - 0.5) for dst in 0..m-1, exactly."""
    dst = np.arange(m, dtype=np.int64)
    num = (2 * dst + 1) * n - 2 * m  # (src - 0.5) = num / (2m)
    idx = -((-num) // (2 * m))
    return np.clip(idx, 0, n - 1)


def linear_weights(n: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(floor index, ceil index, fraction) of the clamped half-pixel source coordinate."""
    dst = np.arange(m, dtype=np.float64)
    src = np.clip(((2.0 * dst + 1.0) * n - m) / (2.0 * m), 0.0, n - 1.0)
    lo = np.floor(src)
    hi = np.ceil(src)
    return lo.astype(np.int64), hi.astype(np.int64), src - lo


def _along(shape_len: int, axis: int, values: np.ndarray) -> np.ndarray:
    shape = [1] * shape_len
    shape[axis] = values.size
    return values.reshape(shape)


@kernel("resample2d")
def resample2d(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x = args[0]
    out_shape = op.outputs[0].shape
    axes = options["axes"]
    if options["mode"] == "nearest-neighbor":
        y = x
        for a in axes:
            y = np.take(y, nearest_indices(x.shape[a], out_shape[a]), axis=a)
        return [y]
    y = x.astype(np.float64)
    for a in reversed(axes):
        lo, hi, t = linear_weights(x.shape[a], out_shape[a])
        t = _along(y.ndim, a, t)
        y = np.take(y, lo, axis=a) * (1.0 - t) + np.take(y, hi, axis=a) * t
    if x.dtype.kind in "iu":
        info = np.iinfo(x.dtype)
        y = np.clip(np.rint(y), info.min, info.max)
    return [y]
