"""ONNX ConstantOfShape vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import numpy_helper

from tests.op_mappings.onnx.harness import check


@pytest.mark.parametrize("value", [None, np.array([7], np.int64), np.array([1.5], np.float32)])
def test_constant_of_shape(value: np.ndarray | None) -> None:
    attrs = {} if value is None else {"value": numpy_helper.from_array(value)}
    result = check("ConstantOfShape", {"s": np.array([2, 3], np.int64)}, attrs, opset=9,
                   constants=["s"])
    assert result.report.to_dict()["ops"]["ConstantOfShape"]["folded"]
