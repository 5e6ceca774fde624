"""ONNX Relu/LeakyRelu/PRelu/Elu/Sigmoid/HardSigmoid/HardSwish/Softplus/Softsign/Tanh,
Shrink, ThresholdedRelu, Swish vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, check_node, rand


@pytest.mark.parametrize("op", ["Relu", "Sigmoid", "Softplus", "Softsign", "Tanh"])
@pytest.mark.parametrize("opset", [6, 14])
def test_plain(op: str, opset: int) -> None:
    check(op, {"x": rand(2, 3, 4)}, opset=opset)


def test_hard_swish() -> None:
    check("HardSwish", {"x": rand(2, 8, low=-5, high=5)}, opset=14)


@pytest.mark.parametrize("attrs", [{}, {"alpha": 0.3}])
def test_leaky_relu(attrs: dict[str, float]) -> None:
    check("LeakyRelu", {"x": rand(3, 4)}, attrs, opset=16)


@pytest.mark.parametrize("attrs", [{}, {"alpha": 0.5}])
def test_elu(attrs: dict[str, float]) -> None:
    check("Elu", {"x": rand(3, 4)}, attrs, opset=6)


@pytest.mark.parametrize("attrs", [{}, {"alpha": 0.1, "beta": 0.3}])
def test_hard_sigmoid(attrs: dict[str, float]) -> None:
    check("HardSigmoid", {"x": rand(3, 4, low=-6, high=6)}, attrs, opset=6)


@pytest.mark.parametrize("slope_shape", [(4,), (1,), (3, 1)])
def test_prelu(slope_shape: tuple[int, ...]) -> None:
    check("PRelu", {"x": rand(2, 3, 4), "slope": rand(*slope_shape, low=0, high=1, seed=1)},
          opset=16, constants=["slope"])


def test_relu_int32() -> None:
    check("Relu", {"x": np.array([-2, 0, 3], np.int32)}, opset=14)


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
