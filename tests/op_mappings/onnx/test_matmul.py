"""ONNX MatMul vs onnxruntime (batched, broadcast, 1-D promotion)."""

from __future__ import annotations

import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("a_shape, b_shape", [
    ((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (3, 4, 2)),
    ((4,), (4, 5)), ((2, 3, 4), (4,)), ((4,), (4,)),
])
@pytest.mark.parametrize("opset", [9, 13])
def test_matmul(a_shape: tuple[int, ...], b_shape: tuple[int, ...], opset: int) -> None:
    check("MatMul", {"a": rand(*a_shape), "b": rand(*b_shape, seed=1)}, opset=opset)


def test_matmul_constant_weight() -> None:
    check("MatMul", {"a": rand(2, 4), "b": rand(4, 3, seed=1)}, opset=13, constants=["b"])
