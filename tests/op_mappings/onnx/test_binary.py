"""ONNX Add/Sub/Mul/Div/Pow vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("opset", [7, 13, 14])
def test_float_broadcast(op: str, opset: int) -> None:
    b = rand(4, low=0.5, high=2.0, seed=1)
    check(op, {"a": rand(2, 3, 4), "b": b}, opset=opset)


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integers(op: str, dtype: str) -> None:
    a = np.array([[7, -7, 9], [-9, 5, 100]], dtype)
    b = np.array([2, 3, -4], dtype)  # Div truncates toward zero in ONNX and WebNN
    check(op, {"a": a, "b": b})


def test_constant_operand() -> None:
    check("Mul", {"a": rand(2, 3), "b": rand(2, 3, seed=1)}, constants=["b"])


def test_float16() -> None:
    check("Add", {"a": rand(3, 2, dtype="float16"), "b": rand(1, 2, dtype="float16", seed=2)})


@pytest.mark.parametrize("opset", [7, 12, 15])
def test_pow_same_type(opset: int) -> None:
    check("Pow", {"a": rand(2, 3, low=0.1, high=3.0), "b": rand(3, low=-2, high=2, seed=1)},
          opset=opset)


def test_pow_integer_exponent_constant() -> None:
    check("Pow", {"a": rand(2, 3, low=-3, high=3), "b": np.array([2, 3, 0], np.int64)},
          opset=15, constants=["b"])


def test_pow_integer_exponent_input() -> None:
    result = check("Pow", {"a": rand(2, 3, low=0.5, high=3), "b": np.array(2, np.int32)},
                   opset=15)
    assert "cast" in result.report.to_dict()["ops"]["Pow"]["webnn_ops"]
