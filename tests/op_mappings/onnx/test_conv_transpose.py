"""ONNX ConvTranspose vs onnxruntime (1-D, 2-D, 3-D; output_shape beyond the natural size)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.op_mappings.onnx.harness import check, rand

CASES: list[dict[str, Any]] = [
    {},
    {"strides": [2, 2]},
    {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]},
    {"strides": [2, 2], "output_shape": [9, 10]},
    {"strides": [2, 2], "auto_pad": "SAME_UPPER"},
    {"dilations": [2, 1]},
]


@pytest.mark.parametrize("attrs", CASES, ids=str)
def test_conv_transpose2d(attrs: dict[str, Any]) -> None:
    inputs = {"x": rand(1, 4, 4, 5), "w": rand(4, 3, 3, 3, seed=1), "b": rand(3, seed=2)}
    check("ConvTranspose", inputs, attrs, opset=11, constants=["w", "b"], atol=1e-5)


def test_grouped() -> None:
    inputs = {"x": rand(1, 4, 3, 3), "w": rand(4, 2, 2, 2, seed=1)}
    check("ConvTranspose", inputs, {"group": 2, "strides": [2, 2]}, opset=11, constants=["w"],
          atol=1e-5)


def test_conv_transpose1d() -> None:
    check("ConvTranspose", {"x": rand(1, 2, 5), "w": rand(2, 3, 3, seed=1)},
          {"strides": [2]}, opset=11, constants=["w"], atol=1e-5)


CASES_3D: list[dict[str, Any]] = [
    {},
    {"strides": [2, 1, 2], "pads": [1, 0, 1, 0, 1, 1], "output_padding": [1, 0, 1]},
    {"dilations": [2, 1, 1], "strides": [3, 2, 1]},
    {"group": 2, "strides": [2, 2, 2]},
    {"strides": [2, 2, 2], "auto_pad": "SAME_LOWER"},
]


@pytest.mark.parametrize("attrs", CASES_3D, ids=str)
@pytest.mark.parametrize("with_bias", [True, False])
def test_conv_transpose3d(attrs: dict[str, Any], with_bias: bool) -> None:
    """One convTranspose2d per depth tap, spread along depth and summed."""
    inputs = {"x": rand(2, 4, 3, 4, 5), "w": rand(4, 3, 3, 2, 3, seed=1)}
    if with_bias:
        inputs["b"] = rand(6 if attrs.get("group") else 3, seed=2)
    if attrs.get("group"):
        inputs["w"] = rand(4, 3, 3, 2, 3, seed=1)  # 2 groups of 2 inputs -> 6 outputs
    check("ConvTranspose", inputs, attrs, opset=11, constants=["w", "b"], atol=1e-5)


@pytest.mark.parametrize("attrs", [
    {"strides": [3, 2], "output_shape": [10, 8]},
    {"strides": [2, 2], "output_shape": [8, 10], "auto_pad": "SAME_UPPER"},
    {"strides": [3], "output_shape": [11]},
], ids=str)
def test_output_shape_beyond_natural_size(attrs: dict[str, Any]) -> None:
    """Negative padding: extra output rows/columns hold only the bias (onnxruntime accepts
    up to stride - 1 extra cells)."""
    spatial = len(attrs["strides"])
    shape = (1, 2, 3, 4)[: 2 + spatial]
    inputs = {"x": rand(*shape), "w": rand(2, 3, *([3] * spatial), seed=1),
              "b": rand(3, seed=2)}
    check("ConvTranspose", inputs, attrs, opset=11, constants=["w", "b"], atol=1e-5)
