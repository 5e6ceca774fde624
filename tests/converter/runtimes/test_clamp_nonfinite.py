"""clamp with NaN and infinite bounds on a graph input, on every backend, against float64
numpy written from the WPT clamp cases 44-50: a NaN bound clamps nothing, an infinite bound
is an ordinary bound, an absent bound leaves ±inf elements as they are, and a NaN element
stays NaN. (The WPT cases feed constants, which a backend may fold; here `x` is an input.)
"""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from tests.backend_compare import run

INF, NAN = math.inf, math.nan
BOUNDS = [(NAN, None), (None, NAN), (NAN, NAN), (NAN, 2.0), (-1.0, NAN), (-INF, None),
          (INF, None), (None, INF), (None, -INF), (-INF, INF), (0.5, INF), (-INF, 0.5)]
X = np.array([-INF, INF, NAN, -3e35, 65504.0, -2.0, -0.25, 0.0, 1.0, 7.5], np.float32)
BACKENDS = ["reference", "onnxruntime", "torch"]


def expected(x: np.ndarray, lo: float | None, hi: float | None) -> np.ndarray:
    """float64: each non-NaN bound replaces the elements beyond it; NaN elements compare false
    and stay."""
    y = x.astype(np.float64)
    if lo is not None and not math.isnan(lo):
        y = np.where(y < lo, lo, y)
    if hi is not None and not math.isnan(hi):
        y = np.where(y > hi, hi, y)
    return y.astype(x.dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("bounds", BOUNDS, ids=[f"{lo}_{hi}" for lo, hi in BOUNDS])
def test_clamp_nonfinite_bounds(backend: str, dtype: str,
                                bounds: tuple[float | None, float | None]) -> None:
    if backend == "torch" and importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    lo, hi = bounds
    opts = {k: v for k, v in (("min_value", lo), ("max_value", hi)) if v is not None}
    with np.errstate(over="ignore"):  # -3e35 is -inf in float16
        x = X.astype(dtype)
    got = run(backend, {"x": x}, lambda b, o: {"y": b.clamp(o["x"], **opts)})["y"]
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, expected(x, lo, hi))
