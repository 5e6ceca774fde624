"""ONNX Gather vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, invalid, rand


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("indices", [np.array([0, 2], np.int64), np.array(1, np.int64),
                                     np.array([[-1, 0]], np.int32)])
def test_gather(axis: int, indices: np.ndarray) -> None:
    check("Gather", {"x": rand(3, 4, 3), "i": indices}, {"axis": axis}, opset=13)


def test_gather_constant_indices() -> None:
    check("Gather", {"x": rand(4, 2), "i": np.array([3, 1], np.int64)}, opset=11,
          constants=["i"])


def test_gather_folded() -> None:
    result = check("Gather", {"x": np.array([5, 6, 7], np.int64), "i": np.array(2, np.int64)},
                   opset=13, constants=["x", "i"])
    assert result.report.to_dict()["ops"]["Gather"]["folded"]


@pytest.mark.parametrize("constants", [["x", "i"], ["i"]])  # folded, in the graph
def test_gather_constant_indices_out_of_range(constants: list[str]) -> None:
    """ONNX refuses indices outside [-size, size); constant ones are an invalid model."""
    inputs = {"x": rand(2, 3), "i": np.array([1, 1_000_000_000], np.int64)}
    assert "indices hold 1000000000, outside [-3, 3) for an axis of size 3" in invalid(
        "Gather", inputs, {"axis": 1}, constants=constants)
    inputs["i"] = np.array([-4], np.int64)
    assert "indices hold -4" in invalid("Gather", inputs, {"axis": 1}, constants=constants)
