"""Reference kernel: resample2d (spec half-pixel mapping).

For each resampled axis with input size n and output size m (scale = m / n):
src = clamp((dst + 0.5) / scale - 0.5, 0, n - 1).
- nearest-neighbor: index ceil(src - 0.5) (round half down), computed exactly in integers;
  values are copied, never converted. Equals ONNX Resize half_pixel + round_prefer_floor.
- linear: v0 = floor(src), v1 = ceil(src), t = src - v0, result v0·(1 - t) + v1·t,
  interpolated along the second axis first, then the first (the spec's x, then y), in
  float64. Integer (uint8/int8) outputs are computed exactly as rationals, rounded half to
  even once and saturated to the type range.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.webnn.half_pixel import linear_weights, nearest_indices
from converter.core.webnn.operand import Operation
from converter.runtimes.reference.registry import kernel


def _round_half_even(num: np.ndarray, den: int) -> np.ndarray:
    """num / den rounded to the nearest integer, ties to even (den > 0), exactly."""
    q, rem = np.divmod(num, den)
    up = (2 * rem > den) | ((2 * rem == den) & (q % 2 == 1))
    rounded: np.ndarray = q + up  # np.divmod is typed Any
    return rounded


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
    # Weights are kept as integer numerators (den - r, r) over den = 2m per axis, so the
    # only roundings are in the float64 sums and the final division (none at all for the
    # integer types, which are computed exactly in int64 and rounded half to even once).
    exact = x.dtype.kind in "iu"
    y = x.astype(np.int64 if exact else np.float64)
    total = 1
    for a in reversed(axes):
        lo, hi, r, den = linear_weights(x.shape[a], out_shape[a])
        r = _along(y.ndim, a, r)
        y = np.take(y, lo, axis=a) * (den - r) + np.take(y, hi, axis=a) * r
        total *= den
    if not exact:
        return [y / total]
    info = np.iinfo(x.dtype)
    return [np.clip(_round_half_even(y, total), info.min, info.max)]
