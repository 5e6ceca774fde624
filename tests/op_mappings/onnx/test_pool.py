"""ONNX MaxPool/AveragePool/LpPool/Global*Pool vs onnxruntime (pads, strides, auto_pad,
ceil_mode, count_include_pad, dilations, 1-D)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.op_mappings.onnx.harness import check, rand

CASES: list[dict[str, Any]] = [
    {"kernel_shape": [2, 2]},
    {"kernel_shape": [3, 3], "strides": [2, 2]},
    {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [3, 2], "pads": [0, 1, 2, 0], "strides": [2, 1]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1},
    {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
    {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_LOWER"},
    {"kernel_shape": [3, 3], "auto_pad": "VALID"},
]


@pytest.mark.parametrize("attrs", CASES, ids=str)
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_pool2d(op: str, attrs: dict[str, Any]) -> None:
    check(op, {"x": rand(1, 2, 7, 8)}, attrs, opset=12)


def test_max_pool_dilations() -> None:
    check("MaxPool", {"x": rand(1, 2, 8, 8)}, {"kernel_shape": [2, 2], "dilations": [2, 2]},
          opset=12)


def test_average_count_include_pad() -> None:
    check("AveragePool", {"x": rand(1, 2, 5, 5)},
          {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}, opset=12)


def test_lp_pool_p2() -> None:
    check("LpPool", {"x": rand(1, 2, 6, 6)}, {"kernel_shape": [2, 2], "strides": [2, 2]},
          opset=18)


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_pool1d(op: str) -> None:
    check(op, {"x": rand(1, 3, 9)}, {"kernel_shape": [3], "strides": [2], "pads": [1, 1]},
          opset=12)


@pytest.mark.parametrize("op", ["GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"])
@pytest.mark.parametrize("shape", [(2, 3, 5, 4), (1, 3, 6)])
def test_global(op: str, shape: tuple[int, ...]) -> None:
    check(op, {"x": rand(*shape)}, opset=13)
