"""ONNX Dropout (inference) vs onnxruntime."""

from __future__ import annotations

import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("opset", [10, 13])
def test_dropout(opset: int) -> None:
    check("Dropout", {"x": rand(2, 3)}, opset=opset)


def test_dropout_mask() -> None:
    check("Dropout", {"x": rand(2, 3)}, opset=13, outputs=("y", "mask"))
