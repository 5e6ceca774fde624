"""ONNX Shape/Size vs onnxruntime (always folded to constants)."""

from __future__ import annotations

import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("attrs", [{}, {"start": 1}, {"end": -1}, {"start": -2, "end": 10}])
def test_shape(attrs: dict[str, int]) -> None:
    opset = 15 if attrs else 13
    result = check("Shape", {"x": rand(2, 3, 4, 5)}, attrs, opset=opset)
    assert result.report.to_dict()["ops"]["Shape"]["folded"] == ["Shape_0"]


@pytest.mark.parametrize("opset", [1, 13, 21])
def test_size(opset: int) -> None:
    check("Size", {"x": rand(2, 3, 4)}, opset=opset)
