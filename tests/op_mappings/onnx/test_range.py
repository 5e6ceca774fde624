"""ONNX Range vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, invalid


@pytest.mark.parametrize("start, limit, delta, dtype", [
    (0, 5, 1, "int64"), (10, 1, -3, "int32"), (0.5, 2.0, 0.25, "float32")])
def test_range(start: float, limit: float, delta: float, dtype: str) -> None:
    inputs = {"a": np.array(start, dtype), "b": np.array(limit, dtype),
              "c": np.array(delta, dtype)}
    check("Range", inputs, opset=11, constants=["a", "b", "c"])


@pytest.mark.parametrize("start, limit, delta, words", [
    (0.0, 5.0, np.nan, "delta (input 2) is nan, it must be finite"),
    (0.0, np.inf, 1.0, "limit (input 1) is inf, it must be finite"),
    (-np.inf, 0.0, 1.0, "start (input 0) is -inf, it must be finite"),
    (0.0, 5.0, 0.0, "delta (input 2) is 0: the range would never end"),
    (0.0, 1e308, 1e-308, "has no finite length"),
])
def test_range_malformed(start: float, limit: float, delta: float, words: str) -> None:
    inputs = {"a": np.array(start), "b": np.array(limit), "c": np.array(delta)}
    assert words in invalid("Range", inputs, opset=11, constants=["a", "b", "c"])


def test_range_inputs_are_scalars() -> None:
    inputs = {"a": np.array([0, 1]), "b": np.array(5), "c": np.array(1)}
    assert "start (input 0) must hold one value, it has 2" in invalid(
        "Range", inputs, opset=11, constants=["a", "b", "c"])
