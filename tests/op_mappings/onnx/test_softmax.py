"""ONNX Softmax / LogSoftmax / Hardmax vs onnxruntime (2-D coercion before opset 13, per-axis
after)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, check_node, rand


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("opset", [11, 13])
def test_softmax(op: str, axis: int | None, opset: int) -> None:
    attrs = {} if axis is None else {"axis": axis}
    check(op, {"x": rand(2, 3, 4, low=-5, high=5)}, attrs, opset=opset)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_large_values_stable(op: str) -> None:
    check(op, {"x": rand(2, 6, low=-80, high=80)}, opset=13)


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_hardmax(opset: int, axis: int) -> None:
    x = np.round(rand(2, 3, 4, seed=3))  # ties: the first maximum wins
    check_node("Hardmax", [("x", x)], {"axis": axis}, opset=opset)
