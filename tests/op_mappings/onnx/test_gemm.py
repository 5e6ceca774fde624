"""ONNX Gemm vs onnxruntime."""

from __future__ import annotations

import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("attrs", [{}, {"transA": 1}, {"transB": 1},
                                   {"alpha": 0.5, "beta": 2.0, "transA": 1, "transB": 1}])
@pytest.mark.parametrize("c_shape", [None, (5,), (3, 5), (1, 1)])
@pytest.mark.parametrize("opset", [9, 13])
def test_gemm(attrs: dict[str, float], c_shape: tuple[int, ...] | None, opset: int) -> None:
    a = rand(4, 3) if attrs.get("transA") else rand(3, 4)
    b = rand(5, 4, seed=1) if attrs.get("transB") else rand(4, 5, seed=1)
    inputs = {"a": a, "b": b}
    if c_shape is not None:
        inputs["c"] = rand(*c_shape, seed=2)
    elif opset < 11:
        pytest.skip("C is required before opset 11")
    check("Gemm", inputs, attrs, opset=opset, constants=["b", "c"])
