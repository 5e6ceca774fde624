"""Shared helpers of the torch backend tests: run one graph on the reference backend (the
oracle) and on the torch backend, and compare (see tests/backend_compare.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

import converter.runtimes.torch  # noqa: F401  (registers the "torch" backend)
from tests.backend_compare import Build, compare_backends, run, ulp

__all__ = ["Build", "compare", "rand", "run", "ulp"]

def compare(inputs: dict[str, np.ndarray], build: Build, f16_ulp: int = 2,
            rtol: float = 1e-5, atol: float = 1e-6, **options: Any) -> dict[str, np.ndarray]:
    """torch vs reference (`tests.backend_compare.compare_backends`): integers exact, float32
    within `rtol` relative (`atol` near zero), float16 within `f16_ulp` ULP; NaN and infinity
    positions equal. Returns torch's outputs."""
    return compare_backends("torch", inputs, build, f16_ulp, rtol, atol, **options)


RNG = np.random.default_rng(12)


def rand(shape: tuple[int, ...] | list[int], dtype: str = "float32", lo: float = -1.0,
         hi: float = 1.0) -> np.ndarray:
    """Uniform random floats in [lo, hi) or integers in [lo, hi] of `dtype`."""
    if np.dtype(dtype).kind == "f":
        return RNG.uniform(lo, hi, size=shape).astype(dtype)
    return RNG.integers(int(lo), int(hi), size=shape, endpoint=True, dtype=np.dtype(dtype))
