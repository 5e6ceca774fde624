"""ONNX ConstantOfShape vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import numpy_helper

from tests.op_mappings.onnx.harness import check, invalid


@pytest.mark.parametrize("value", [None, np.array([7], np.int64), np.array([1.5], np.float32)])
def test_constant_of_shape(value: np.ndarray | None) -> None:
    attrs = {} if value is None else {"value": numpy_helper.from_array(value)}
    result = check("ConstantOfShape", {"s": np.array([2, 3], np.int64)}, attrs, opset=9,
                   constants=["s"])
    assert result.report.to_dict()["ops"]["ConstantOfShape"]["folded"]


@pytest.mark.parametrize("shape, value, words", [
    (np.array([2, -1]), None, "shape (input 0) [2, -1] has a size below 0"),
    (np.array([[2, 3]]), None, "shape (input 0) must be 1-D, it has shape [1, 2]"),
    (np.array([2.5]), None, "shape (input 0) must hold integers, it is float64"),
    (np.array([2]), np.array([1.0, 2.0], np.float32),
     "attribute 'value' must hold one value, it has 2"),
    (np.array([2]), np.zeros(0, np.float32), "attribute 'value' must hold one value, it has 0"),
])
def test_constant_of_shape_malformed(shape: np.ndarray, value: np.ndarray | None,
                                     words: str) -> None:
    attrs = {} if value is None else {"value": numpy_helper.from_array(value)}
    assert words in invalid("ConstantOfShape", {"s": shape}, attrs, constants=["s"])
