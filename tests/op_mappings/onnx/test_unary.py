"""ONNX unary math ops vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, rand

FLOAT_OPS = ["Abs", "Neg", "Ceil", "Floor", "Round", "Exp", "Sin", "Cos", "Tan", "Erf",
             "Reciprocal", "Sign"]


@pytest.mark.parametrize("op", FLOAT_OPS)
def test_float(op: str) -> None:
    x = rand(3, 4)
    x[0, :3] = [0.5, -2.5, 1.5]  # Round ties go to even in both
    check(op, {"x": x}, opset=13)


@pytest.mark.parametrize("op", ["Sqrt", "Log"])
def test_positive_domain(op: str) -> None:
    check(op, {"x": rand(2, 5, low=0.1, high=10.0)}, opset=13)


@pytest.mark.parametrize("op", ["Abs", "Neg", "Sign"])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integers(op: str, dtype: str) -> None:
    check(op, {"x": np.array([-3, 0, 5, -1], dtype)}, opset=13)


@pytest.mark.parametrize("opset", [6, 11])
def test_older_opsets(opset: int) -> None:
    check("Abs", {"x": rand(4)}, opset=opset)
    check("Round", {"x": np.array([0.5, 1.5, -0.5, 2.4], np.float32)}, opset=max(opset, 11))


def test_float16() -> None:
    check("Exp", {"x": rand(5, dtype="float16", low=-2, high=2)}, opset=13)
