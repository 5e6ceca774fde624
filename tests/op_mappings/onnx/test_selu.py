"""ONNX Selu vs onnxruntime."""

from __future__ import annotations

import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("attrs", [{}, {"alpha": 2.0, "gamma": 3.0}])
def test_selu(attrs: dict[str, float]) -> None:
    result = check("Selu", {"x": rand(3, 4)}, attrs, opset=6)
    assert result.report.to_dict()["ops"]["Selu"]["webnn_ops"] == ["elu", "mul"]
