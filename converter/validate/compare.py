"""Comparing a converted model's values with the original framework's.

Metrics of one value (both arrays as float64; complex values as (real, imaginary) pairs):
- `max_abs`: max |ours - ref| over the elements (inf where exactly one side is NaN or the
  infinities differ; positions where both are NaN, or equal infinities, count as equal);
- `max_rel`: max_abs / max|ref| (the error relative to the value's peak; 0 when both are zero,
  inf when only the reference is all zeros);
- `cosine`: cosine similarity of the flattened values (finite elements only; 1 when both are
  all zeros).

Verdict: floats pass when `max_abs <= atol + rtol * max|ref|` (tolerance scaled by the
value's peak, the project's model criterion); integers and bools must match exactly, except
quantized values, which may differ by `steps` quantization steps. A shape mismatch fails.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Comparison:
    """The comparison of one value. `bound` is the largest allowed max_abs."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    max_abs: float
    max_rel: float
    cosine: float
    bound: float
    passed: bool
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype, "shape": list(self.shape),
                "max_abs": json_number(self.max_abs), "max_rel": json_number(self.max_rel),
                "cosine": json_number(self.cosine), "tolerance": json_number(self.bound),
                "passed": self.passed, "note": self.note}


def json_number(x: float) -> float | str | None:
    """A JSON-safe number: NaN -> None, +-inf -> "inf"/"-inf"."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    if isinstance(x, float) and math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)


def compare(name: str, ours: Any, ref: Any, *, rtol: float, atol: float,
            steps: int = 0) -> Comparison:
    """Compare `ours` with the reference value `ref` (see the module docstring)."""
    ours, ref = np.asarray(ours), np.asarray(ref)
    dtype = ref.dtype.name
    if ours.shape != ref.shape:
        return Comparison(name, dtype, tuple(ref.shape), math.inf, math.inf, math.nan,
                          0.0, False, f"shape {list(ours.shape)} != reference "
                          f"{list(ref.shape)}")
    a, r = _float64(ours), _float64(ref)
    if r.size == 0:
        return Comparison(name, dtype, tuple(ref.shape), 0.0, 0.0, 1.0, 0.0, True)
    with np.errstate(all="ignore"):  # overflowing differences are inf, which fails
        return _metrics(name, dtype, tuple(ref.shape), a, r,
                        atol + rtol * _peak(r) if ref.dtype.kind in "fc" else float(steps))


def _float64(x: np.ndarray) -> np.ndarray:
    """float64 values; a complex value as (real, imaginary) pairs on a last axis, so that
    complex outputs compare without dropping their imaginary parts (a real value gets
    imaginary parts 0 when the other side is complex)."""
    if x.dtype.kind == "c":
        return np.stack([x.real.astype(np.float64), x.imag.astype(np.float64)], -1)
    return x.astype(np.float64)


def _peak(r: np.ndarray) -> float:
    fr = np.where(np.isfinite(r), np.abs(r), 0.0)
    return float(fr.max()) if fr.size else 0.0


def _metrics(name: str, dtype: str, shape: tuple[int, ...], a: np.ndarray, r: np.ndarray,
             bound: float) -> Comparison:
    if a.ndim < r.ndim:  # one side complex: the other's imaginary parts are 0
        a = np.stack([a, np.zeros_like(a)], -1)
    elif r.ndim < a.ndim:
        r = np.stack([r, np.zeros_like(r)], -1)
    both_nan = np.isnan(a) & np.isnan(r)
    same_inf = np.isinf(a) & np.isinf(r) & (a == r)
    finite = np.isfinite(a) & np.isfinite(r)
    diff = np.where(finite, np.abs(a - r), np.inf)
    diff = np.where(both_nan | same_inf, 0.0, diff)
    max_abs = float(diff.max())
    peak = _peak(r)
    if peak > 0:
        max_rel = max_abs / peak
    else:
        max_rel = 0.0 if max_abs == 0 else math.inf
    av, rv = np.where(finite, a, 0.0).ravel(), np.where(finite, r, 0.0).ravel()
    # cosine is scale-free: scaled to a peak of 1, huge values cannot overflow the norms
    av, rv = (v / m if (m := float(np.abs(v).max())) > 0 else v for v in (av, rv))
    na, nr = float(np.linalg.norm(av)), float(np.linalg.norm(rv))
    if na == 0 and nr == 0:
        cosine = 1.0
    elif na == 0 or nr == 0:
        cosine = 0.0
    else:
        cosine = float(np.dot(av, rv) / (na * nr))
    passed = bool(max_abs <= bound)
    return Comparison(name, dtype, shape, max_abs, max_rel, cosine, bound, passed)
