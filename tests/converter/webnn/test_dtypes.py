"""The spec's MLNumber cast rules (section 1.7), checked against hand-derived values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from converter.webnn.dtypes import cast_array, cast_number


@pytest.mark.parametrize(("value", "dtype", "expected"), [
    (1.5, "int8", 2), (2.5, "int8", 2), (-2.5, "int8", -2), (300, "int8", 127),
    (-300.0, "uint8", 0), (float("nan"), "int32", 0), (float("inf"), "uint32", 2**32 - 1),
    (2**70, "int64", 2**63 - 1), (-(2**70), "uint64", 0), (2**64 + 5, "uint64", 2**64 - 1),
    (0.1, "float16", 0.0999755859375), (1e6, "float16", math.inf), (-1e39, "float32", -math.inf),
])
def test_cast_number(value: float, dtype: str, expected: float) -> None:
    assert cast_number(value, dtype) == expected


def test_cast_number_keeps_nan_and_negative_zero() -> None:
    assert math.isnan(cast_number(float("nan"), "float16"))
    assert math.copysign(1.0, cast_number(-0.0, "float32")) == -1.0


def test_cast_array_matches_scalar_rule() -> None:
    values = np.array([0.5, 1.5, -1.5, 1e10, -1e10, np.nan, 254.5])
    for dtype in ("int8", "uint8", "int32", "uint32", "int64", "uint64"):
        expected = [cast_number(float(v), dtype) for v in values]
        assert cast_array(values, dtype).tolist() == expected
