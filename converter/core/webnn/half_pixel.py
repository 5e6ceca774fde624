"""resample2d's half-pixel source coordinates as exact integer tables (spec section on
resample2d): for an axis of input size n resampled to m,
src = clamp((dst + 0.5)·n/m − 0.5, 0, n − 1). Shared by the reference kernel, the torch
backend and the ONNX lowering, which all compute their index tables at compile time."""

from __future__ import annotations

import numpy as np


def nearest_indices(n: int, m: int) -> np.ndarray:
    """ceil(clamp((dst + 0.5)·n/m - 0.5, 0, n - 1) - 0.5) for dst in 0..m-1, exactly
    (nearest-neighbor: round half down, ONNX round_prefer_floor)."""
    dst = np.arange(m, dtype=np.int64)
    num = (2 * dst + 1) * n - 2 * m  # (src - 0.5) = num / (2m)
    idx = -((-num) // (2 * m))
    return np.clip(idx, 0, n - 1)


def linear_weights(n: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """floor index, ceil index and fraction numerator r of the clamped half-pixel source
    coordinate, exactly: src = lo + r / (2m) with 0 <= r < 2m. Returns (lo, hi, r, 2m)."""
    den = 2 * m
    dst = np.arange(m, dtype=np.int64)
    num = np.clip((2 * dst + 1) * n - m, 0, (n - 1) * den)  # src = num / den, clamped
    lo = num // den
    r = num - lo * den
    return lo, lo + (r > 0), r, den
