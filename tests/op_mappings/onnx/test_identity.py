"""ONNX Identity vs onnxruntime (graph input -> output needs an identity op)."""

from __future__ import annotations

import numpy as np

from tests.op_mappings.onnx.harness import check, rand


def test_identity_of_input() -> None:
    result = check("Identity", {"x": rand(2, 3)}, opset=14)
    assert [op.op for op in result.graph.operations] == ["identity"]


def test_identity_of_constant() -> None:
    result = check("Identity", {"x": np.array([1, 2], np.int64)}, opset=14, constants=["x"])
    assert result.report.to_dict()["ops"]["Identity"]["folded"]


def test_identity_bool() -> None:
    check("Identity", {"x": np.array([True, False])}, opset=14)
