"""ONNX Split vs onnxruntime (equal, explicit sizes via attribute / input, num_outputs)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, rand


def test_split_equal() -> None:
    check("Split", {"x": rand(6, 4)}, {"axis": 0}, opset=11, outputs=("a", "b", "c"))


def test_split_attr_sizes() -> None:
    check("Split", {"x": rand(2, 7)}, {"axis": -1, "split": [2, 5]}, opset=11,
          outputs=("a", "b"))


@pytest.mark.parametrize("opset", [13, 18])
def test_split_input_sizes(opset: int) -> None:
    check("Split", {"x": rand(2, 7), "s": np.array([3, 1, 3], np.int64)}, {"axis": 1},
          opset=opset, outputs=("a", "b", "c"), constants=["s"])


def test_split_num_outputs_uneven() -> None:
    check("Split", {"x": rand(7, 2)}, {"axis": 0, "num_outputs": 3}, opset=18,
          outputs=("a", "b", "c"))
