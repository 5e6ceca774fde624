"""ONNX Clip vs onnxruntime: attribute form (opset 6), input form (11+), constant and
computed bounds, missing bounds, min > max."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("attrs", [{}, {"min": -1.0}, {"max": 0.5}, {"min": -1.0, "max": 1.0}])
def test_clip6(attrs: dict[str, float]) -> None:
    check("Clip", {"x": rand(3, 4)}, attrs, opset=6)


@pytest.mark.parametrize("bounds", [(-1.0, 1.0), (None, 0.5), (-0.5, None), (None, None),
                                    (1.0, -1.0)])
@pytest.mark.parametrize("opset", [11, 13])
def test_clip_constant_bounds(bounds: tuple[float | None, float | None], opset: int) -> None:
    lo, hi = bounds
    inputs = {"x": rand(3, 4),
              "lo": None if lo is None else np.array(lo, np.float32),
              "hi": None if hi is None else np.array(hi, np.float32)}
    if hi is None:
        inputs.pop("hi")
    result = check("Clip", inputs, opset=opset, constants=["lo", "hi"])
    assert result.report.to_dict()["ops"]["Clip"]["webnn_ops"] == ["clamp"]


def test_clip_computed_bounds() -> None:
    result = check("Clip", {"x": rand(3, 4), "lo": np.array(-0.5, np.float32),
                            "hi": np.array(1.0, np.float32)}, opset=13)
    assert result.report.to_dict()["ops"]["Clip"]["webnn_ops"] == ["max", "min"]


def test_clip_int32() -> None:
    check("Clip", {"x": np.array([-5, 0, 5, 9], np.int32), "lo": np.array(-2, np.int32),
                   "hi": np.array(6, np.int32)}, opset=13, constants=["lo", "hi"])
