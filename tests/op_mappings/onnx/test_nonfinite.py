"""ONNX IsNaN/IsInf vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check

X = np.array([1.0, np.nan, np.inf, -np.inf, 0.0, -2.0], np.float32)


@pytest.mark.parametrize("opset", [9, 13])
def test_isnan(opset: int) -> None:
    check("IsNaN", {"x": X}, opset=opset)


@pytest.mark.parametrize("pos", [0, 1])
@pytest.mark.parametrize("neg", [0, 1])
def test_isinf(pos: int, neg: int) -> None:
    check("IsInf", {"x": X}, {"detect_positive": pos, "detect_negative": neg}, opset=10)


def test_isinf_defaults() -> None:
    check("IsInf", {"x": X}, opset=20)
