"""ONNX Slice vs onnxruntime (clamping, negative indices, steps incl. negative, attribute
form)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, rand

BIG = 2**62
CASES = [
    ([1], [3], [0], [1]),
    ([0, 1], [2, -1], [0, 1], None),
    ([-3], [BIG], [-1], [1]),
    ([0], [5], [1], [2]),
    ([-1], [-BIG], [1], [-1]),
    ([3], [0], [1], [-2]),
    ([1, -1], [BIG, -BIG], [0, 2], [2, -3]),
]


@pytest.mark.parametrize("starts, ends, axes, steps", CASES, ids=str)
def test_slice13(starts: list[int], ends: list[int], axes: list[int],
                 steps: list[int] | None) -> None:
    inputs = {"x": rand(3, 5, 6), "starts": np.array(starts, np.int64),
              "ends": np.array(ends, np.int64), "axes": np.array(axes, np.int64)}
    if steps is not None:
        inputs["steps"] = np.array(steps, np.int64)
    check("Slice", inputs, opset=13, constants=["starts", "ends", "axes", "steps"])


def test_slice_no_axes() -> None:
    check("Slice", {"x": rand(4, 5), "starts": np.array([1, 2], np.int64),
                    "ends": np.array([3, 4], np.int64)}, opset=11, constants=["starts", "ends"])


def test_slice1_attributes() -> None:
    check("Slice", {"x": rand(4, 5)}, {"starts": [1], "ends": [-1], "axes": [1]}, opset=9)


def test_slice_folded() -> None:
    result = check("Slice", {"x": np.arange(10, dtype=np.int64), "s": np.array([2], np.int64),
                             "e": np.array([7], np.int64)}, opset=13, constants=["x", "s", "e"])
    assert result.report.to_dict()["ops"]["Slice"]["folded"]
