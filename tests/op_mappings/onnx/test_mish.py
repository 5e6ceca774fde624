"""ONNX Mish vs onnxruntime."""

from __future__ import annotations

from tests.op_mappings.onnx.harness import check, rand


def test_mish() -> None:
    check("Mish", {"x": rand(3, 5, low=-6, high=6)}, opset=18)
