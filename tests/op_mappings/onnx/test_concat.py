"""ONNX Concat vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("opset", [4, 13])
def test_concat(axis: int, opset: int) -> None:
    if opset < 11 and axis < 0:
        pytest.skip("negative axes from opset 11")
    shapes = {0: [(1, 3), (2, 3)], 1: [(2, 1), (2, 3)], -1: [(2, 1), (2, 3)]}[axis]
    check("Concat", {"a": rand(*shapes[0]), "b": rand(*shapes[1], seed=1)}, {"axis": axis},
          opset=opset)


def test_concat_int64_folded() -> None:
    result = check("Concat", {"a": np.array([1, 2], np.int64), "b": np.array([3], np.int64)},
                   {"axis": 0}, opset=13, constants=["a", "b"])
    assert result.report.to_dict()["ops"]["Concat"]["folded"]
