"""ONNX Equal/Greater/Less/GreaterOrEqual/LessOrEqual vs onnxruntime (bool outputs)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check

OPS = ["Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_compare(op: str, dtype: str) -> None:
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype)
    b = np.array([3, 2, 1], dtype)
    opset = 12 if op in ("GreaterOrEqual", "LessOrEqual") else 13
    result = check(op, {"a": a, "b": b}, opset=opset)
    assert result.run({"a": a, "b": b})["y"].dtype == np.bool_


@pytest.mark.parametrize("opset", [7, 11])
def test_old_opsets(opset: int) -> None:
    check("Greater", {"a": np.array([1, 2], np.float32), "b": np.array([2, 1], np.float32)},
          opset=opset)


def test_equal_bool_inputs() -> None:
    a = np.array([True, False, True])
    b = np.array([True, True, False])
    check("Equal", {"a": a, "b": b}, opset=13)
