"""ONNX MaxPool/AveragePool/LpPool/Global*Pool vs onnxruntime (pads, strides, auto_pad,
ceil_mode, count_include_pad, dilations, 1-D, 3-D, LpPool of any p)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.op_mappings.onnx.harness import check, invalid, rand

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


CASES_3D: list[dict[str, Any]] = [
    {"kernel_shape": [2, 2, 2]},
    {"kernel_shape": [3, 2, 3], "strides": [2, 1, 2], "pads": [1, 0, 1, 1, 1, 0]},
    {"kernel_shape": [2, 3, 2], "dilations": [2, 1, 2], "strides": [1, 2, 1]},
    {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2], "ceil_mode": 1, "pads": [1, 1, 1, 0, 0, 0]},
    {"kernel_shape": [3, 3, 2], "strides": [2, 2, 2], "auto_pad": "SAME_UPPER"},
]


@pytest.mark.parametrize("attrs", CASES_3D, ids=str)
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_pool3d(op: str, attrs: dict[str, Any]) -> None:
    """Separable 3-D pooling (2-D over H, W then over D)."""
    check(op, {"x": rand(2, 3, 6, 7, 5)}, attrs, opset=19)


@pytest.mark.parametrize("attrs", [CASES_3D[1], CASES_3D[3]], ids=str)
def test_average_pool3d_count_include_pad(attrs: dict[str, Any]) -> None:
    check("AveragePool", {"x": rand(1, 2, 6, 7, 5)}, {**attrs, "count_include_pad": 1},
          opset=19)


@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [3, 3], "ceil_mode": 1},
    {"kernel_shape": [2, 2], "pads": [1, 0, 1, 0], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2], "ceil_mode": 1},
], ids=str)
def test_average_ceil_count_include_pad(attrs: dict[str, Any]) -> None:
    """The model's pads are counted, the ceil_mode overhang is not (as in ONNX)."""
    for shape in [(1, 2, 2, 2), (1, 2, 6, 7)]:
        check("AveragePool", {"x": rand(*shape)}, {**attrs, "count_include_pad": 1},
              opset=19)


@pytest.mark.parametrize("p", [1, 3, 4])
@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [2, 2]},
    {"kernel_shape": [3, 3], "pads": [2, 1, 2, 1], "strides": [2, 2]},
    {"kernel_shape": [2, 2], "auto_pad": "SAME_LOWER"},
    {"kernel_shape": [3], "strides": [2]},
    {"kernel_shape": [2, 2, 2], "strides": [1, 2, 1]},
    {"kernel_shape": [2, 2], "dilations": [2, 2]},
], ids=str)
def test_lp_pool_general_p(p: int, attrs: dict[str, Any]) -> None:
    shape = {1: (1, 2, 9), 2: (1, 2, 6, 7), 3: (1, 2, 4, 5, 6)}[len(attrs["kernel_shape"])]
    check("LpPool", {"x": rand(*shape)}, {**attrs, "p": p}, opset=18, rtol=1e-4, atol=1e-5)


def test_lp_pool_3d_p2() -> None:
    check("LpPool", {"x": rand(1, 2, 4, 5, 6)}, {"kernel_shape": [2, 3, 2], "p": 2},
          opset=18, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"])
def test_global_3d(op: str) -> None:
    check(op, {"x": rand(2, 3, 4, 3, 5)}, opset=13)


@pytest.mark.parametrize("p", [1, 3])
def test_global_lp_pool_p(p: int) -> None:
    check("GlobalLpPool", {"x": rand(2, 3, 4, 5)}, {"p": p}, opset=13, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("attrs, words", [
    ({"kernel_shape": [2]}, "kernel_shape [2] has 1 entries, 2 expected"),
    ({"kernel_shape": [0, 2]}, "kernel_shape [0, 2] has an entry below 1"),
    ({"kernel_shape": [2, 2], "strides": [0, 1], "ceil_mode": 1},
     "strides [0, 1] has an entry below 1"),
    ({"kernel_shape": [2, 2], "dilations": [1, 1, 1]}, "dilations [1, 1, 1] has 3 entries"),
    ({"kernel_shape": [2, 2], "pads": [1, 1]}, "pads [1, 1] has 2 entries, 4 expected"),
])
def test_pool_malformed_window(attrs: dict[str, list[int]], words: str) -> None:
    assert words in invalid("MaxPool", {"x": rand(1, 1, 4, 4)}, attrs)
