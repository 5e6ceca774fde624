"""ONNX Not/And/Or/Xor vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check

A = np.array([[True, False, True, False]])
B = np.array([True, True, False, False])


@pytest.mark.parametrize("op", ["And", "Or", "Xor"])
def test_binary(op: str) -> None:
    check(op, {"a": A, "b": B})


def test_not() -> None:
    check("Not", {"a": A})


def test_constant_operand() -> None:
    check("And", {"a": A, "b": B}, constants=["b"])
