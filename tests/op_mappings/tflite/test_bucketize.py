"""BUCKETIZE vs LiteRT: float values on, between and outside the boundaries, NaN, repeated
boundaries, a single boundary, int32 and int64 inputs, and the sorted rule."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.errors import ConversionFailed
from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import In, S, check, op_model, rand


def model(x: np.ndarray, boundaries: list[float]) -> tuple[bytes, list[np.ndarray]]:
    o = S.BucketizeOptionsT()
    o.boundaries = list(boundaries)
    return op_model("BUCKETIZE", [In(x)], [(x.shape, "int32")], o)


@pytest.mark.parametrize("boundaries", [[-0.5, 0.0, 0.5], [0.25], [-1, 0, 0, 0.3, 0.3, 2],
                                        [-3.0, -2.0]])
def test_float(boundaries: list[float]) -> None:
    x = rand(4, 25, low=-1.5, high=1.5, seed=1)
    x[0, :6] = [-0.5, 0.0, 0.5, 0.25, 0.3, -1.0]  # exactly on boundaries
    x[1, :3] = [np.nan, np.inf, -np.inf]
    m, feeds = model(x, boundaries)
    check(m, feeds)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integers(dtype: str) -> None:
    x = rand(3, 10, low=-20, high=20, seed=2, dtype=dtype)
    m, feeds = model(x, [-10, -2.5, 0, 3, 3.5, 15])
    check(m, feeds)


def test_unsorted_boundaries_rejected() -> None:
    m, _ = model(rand(2, 3), [1.0, 0.0])
    with pytest.raises(ConversionFailed, match="not sorted"):
        convert_tflite(m)
