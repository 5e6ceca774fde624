"""ONNX Gelu vs onnxruntime."""

from __future__ import annotations

import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate: str) -> None:
    result = check("Gelu", {"x": rand(3, 5, low=-4, high=4)}, {"approximate": approximate},
                   opset=20)
    kind = "native" if approximate == "none" else "decomposed"
    assert result.report.to_dict()["ops"]["Gelu"][kind]
