"""ONNX Cast/CastLike vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

from tests.op_mappings.onnx.harness import check

FLOATS = np.array([[-2.7, -0.0, 0.0, 1.2], [3.9, 100.0, -100.0, 0.5]], np.float32)


@pytest.mark.parametrize("to", [TensorProto.INT32, TensorProto.INT64, TensorProto.FLOAT16,
                                TensorProto.BOOL, TensorProto.INT8, TensorProto.FLOAT])
@pytest.mark.parametrize("opset", [6, 13, 19])
def test_from_float(to: int, opset: int) -> None:
    check("Cast", {"x": FLOATS}, {"to": to}, opset=opset)


@pytest.mark.parametrize("to", [TensorProto.FLOAT, TensorProto.INT32, TensorProto.UINT8])
def test_from_bool(to: int) -> None:
    check("Cast", {"x": np.array([True, False, True])}, {"to": to}, opset=13)


def test_int64_to_float() -> None:
    check("Cast", {"x": np.array([-3, 0, 7], np.int64)}, {"to": TensorProto.FLOAT}, opset=13)


def test_to_double_warns() -> None:
    result = check("Cast", {"x": FLOATS}, {"to": TensorProto.DOUBLE}, opset=13)
    assert any("float64" in w for w in result.report.warnings)


def test_cast_like() -> None:
    check("CastLike", {"x": FLOATS, "t": np.array([1], np.int32)}, opset=15, constants=["t"])
