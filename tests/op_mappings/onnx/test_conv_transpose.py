"""ONNX ConvTranspose vs onnxruntime."""

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
