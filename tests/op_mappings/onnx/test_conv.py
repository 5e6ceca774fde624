"""ONNX Conv vs onnxruntime (pads, strides, dilations, groups, auto_pad, bias, 1-D)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.op_mappings.onnx.harness import check, invalid, rand

CASES: list[dict[str, Any]] = [
    {},
    {"pads": [1, 1, 1, 1]},
    {"pads": [0, 1, 2, 1], "strides": [2, 1]},
    {"dilations": [2, 2]},
    {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
    {"auto_pad": "SAME_LOWER", "strides": [2, 2]},
    {"auto_pad": "VALID"},
    {"kernel_shape": [3, 3], "strides": [1, 2]},
]


@pytest.mark.parametrize("attrs", CASES, ids=str)
@pytest.mark.parametrize("bias", [False, True])
def test_conv2d(attrs: dict[str, Any], bias: bool) -> None:
    inputs = {"x": rand(1, 4, 7, 8), "w": rand(6, 4, 3, 3, seed=1)}
    if bias:
        inputs["b"] = rand(6, seed=2)
    check("Conv", inputs, attrs, opset=11, constants=["w", "b"], atol=1e-5)


@pytest.mark.parametrize("group", [2, 4])
def test_grouped(group: int) -> None:
    inputs = {"x": rand(2, 4, 6, 6), "w": rand(8, 4 // group, 3, 3, seed=1)}
    check("Conv", inputs, {"group": group, "pads": [1, 1, 1, 1]}, opset=11, constants=["w"],
          atol=1e-5)


@pytest.mark.parametrize("attrs", [{}, {"pads": [1, 2], "strides": [2]}, {"dilations": [2]}],
                         ids=str)
def test_conv1d(attrs: dict[str, Any]) -> None:
    check("Conv", {"x": rand(1, 3, 10), "w": rand(5, 3, 3, seed=1)}, attrs, opset=11,
          constants=["w"], atol=1e-5)


@pytest.mark.parametrize("attrs, words", [
    ({"dilations": [0, 1]}, "dilations [0, 1] has an entry below 1"),
    ({"strides": [1]}, "strides [1] has 1 entries, 2 expected"),
    ({"kernel_shape": [2, 2, 2]}, "kernel_shape [2, 2, 2] has 3 entries, 2 expected"),
])
def test_conv_malformed_window(attrs: dict[str, list[int]], words: str) -> None:
    inputs = {"x": rand(1, 1, 4, 4), "w": rand(1, 1, 2, 2)}
    assert words in invalid("Conv", inputs, attrs, constants=["w"])


CASES_3D: list[dict[str, Any]] = [
    {},
    {"pads": [1, 1, 1, 1, 1, 1]},
    {"pads": [1, 3, 3, 1, 3, 3], "strides": [1, 2, 2]},  # r3d_18's stem
    {"strides": [2, 1, 2], "pads": [0, 1, 0, 1, 0, 1]},
    {"dilations": [2, 1, 2]},
    {"auto_pad": "SAME_UPPER", "strides": [2, 2, 1]},
    {"group": 2, "pads": [1, 1, 1, 1, 1, 1]},
]


@pytest.mark.parametrize("attrs", CASES_3D, ids=str)
@pytest.mark.parametrize("bias", [False, True])
def test_conv3d(attrs: dict[str, Any], bias: bool) -> None:
    """One conv2d over the depth taps folded into channels, the output depth into the
    batch; vs onnxruntime's Conv (NCDHW)."""
    group = attrs.get("group", 1)
    kernel = [3, 7, 7] if attrs.get("strides") == [1, 2, 2] else [3, 3, 3]
    inputs = {"x": rand(2, 4, 5, 9, 10), "w": rand(6, 4 // group, *kernel, seed=1)}
    if bias:
        inputs["b"] = rand(6, seed=2)
    check("Conv", inputs, attrs, opset=11, constants=["w", "b"], atol=1e-4)


def test_conv3d_computed_filter() -> None:
    """A filter that is a graph input (not a constant) is rearranged by graph ops."""
    check("Conv", {"x": rand(1, 2, 4, 5, 5), "w": rand(3, 2, 2, 3, 3, seed=1)},
          {"pads": [0, 1, 1, 1, 1, 1]}, opset=11, atol=1e-4)
