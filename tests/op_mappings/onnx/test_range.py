"""ONNX Range vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check


@pytest.mark.parametrize("start, limit, delta, dtype", [
    (0, 5, 1, "int64"), (10, 1, -3, "int32"), (0.5, 2.0, 0.25, "float32")])
def test_range(start: float, limit: float, delta: float, dtype: str) -> None:
    inputs = {"a": np.array(start, dtype), "b": np.array(limit, dtype),
              "c": np.array(delta, dtype)}
    check("Range", inputs, opset=11, constants=["a", "b", "c"])
