"""converter.validate.compare on values a hostile model can make: complex references (a
TFLite output tensor typed complex) and magnitudes whose squares overflow float64. Neither
may raise a numpy warning (the CLI's stderr holds one line), and the metrics stay exact.
Oracle: the metrics computed by hand."""

from __future__ import annotations

import math
import warnings

import numpy as np

from converter.validate.compare import compare


def _quiet(*args: object, **kwargs: object) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return compare(*args, **kwargs)  # type: ignore[arg-type]


def test_complex_reference_keeps_its_imaginary_part() -> None:
    ref = np.array([1 + 2j, 3 - 1j], np.complex128)
    c = _quiet("y", np.array([1.0, 3.0], np.float32), ref, rtol=0.0, atol=0.5)
    assert c.max_abs == 2.0 and not c.passed  # |2j| and |-1j|: the imaginary parts count
    same = _quiet("y", ref.astype(np.complex64), ref, rtol=0.0, atol=1e-6)
    assert same.passed and same.max_abs == 0.0 and same.dtype == "complex128"
    assert same.shape == (2,)


def test_huge_values_do_not_overflow() -> None:
    ref = np.array([1e300, -1e300, 5e299], np.float64)
    c = _quiet("y", ref * 0.5, ref, rtol=1e-3, atol=0.0)
    assert math.isclose(c.max_abs, 5e299) and math.isclose(c.cosine, 1.0)
    apart = _quiet("y", -ref, ref, rtol=1e-3, atol=0.0)
    assert math.isclose(apart.max_abs, 2e300) and math.isclose(apart.cosine, -1.0)
    top = np.array([1.5e308, -1.5e308])  # differences beyond float64: inf, which fails
    over = _quiet("y", -top, top, rtol=1e-3, atol=0.0)
    assert over.max_abs == math.inf and not over.passed and math.isclose(over.cosine, -1.0)
