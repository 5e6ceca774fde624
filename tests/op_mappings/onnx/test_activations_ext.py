"""ONNX Shrink, ThresholdedRelu, Swish, Hardmax (2-D coercion before opset 13) vs
onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import rand
from tests.op_mappings.onnx.harness_ext import check_node


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_shrink(dtype: str) -> None:
    x = (rand(3, 5, low=-3, high=3) * (1 if dtype == "float32" else 3)).astype(dtype)
    check_node("Shrink", [("x", x)], {"lambd": 1.0, "bias": 0.5 if dtype == "float32"
                                      else 2.0}, opset=9)


def test_thresholded_relu_and_swish() -> None:
    check_node("ThresholdedRelu", [("x", rand(3, 5))], {"alpha": 0.7}, opset=10)
    check_node("ThresholdedRelu", [("x", rand(3, 5))], opset=10)
    try:
        check_node("Swish", [("x", rand(3, 5))], {"alpha": 1.3}, opset=24)
    except Exception as exc:  # onnxruntime without opset 24
        if "NOT_IMPLEMENTED" not in str(exc) and "opset" not in str(exc).lower():
            raise
        pytest.skip(f"onnxruntime: {exc}")


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_hardmax(opset: int, axis: int) -> None:
    x = np.round(rand(2, 3, 4, seed=3))  # ties: the first maximum wins
    check_node("Hardmax", [("x", x)], {"axis": axis}, opset=opset)
