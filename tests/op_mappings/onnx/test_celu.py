"""ONNX Celu vs onnxruntime."""

from __future__ import annotations

import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("attrs", [{}, {"alpha": 2.0}, {"alpha": 0.5}])
def test_celu(attrs: dict[str, float]) -> None:
    check("Celu", {"x": rand(3, 4)}, attrs, opset=12)
