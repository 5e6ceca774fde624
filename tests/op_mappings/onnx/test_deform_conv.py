"""ONNX DeformConv vs onnxruntime: groups, offset groups, mask, bias, padding (asymmetric),
dilation, stride, offsets large enough to sample outside the input, float16, and a model
with constant weights; plus the rejection of a 1-D DeformConv."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import converter
from converter.core.errors import ConversionFailed
from tests.op_mappings.onnx.harness import check_node, node_model, rand

TOL = {"rtol": 1e-4, "atol": 1e-4}


def _out(size: int, k: int, s: int, d: int, pb: int, pe: int) -> int:
    return (size + pb + pe - ((k - 1) * d + 1)) // s + 1


def _case(n: int = 2, c: int = 4, h: int = 7, w: int = 6, m: int = 6, kernel=(3, 3),
          group: int = 1, og: int = 1, strides=(1, 1), dilations=(1, 1), pads=(0, 0, 0, 0),
          mask: bool = False, bias: bool = False, spread: float = 2.5, seed: int = 0
          ) -> tuple[list[tuple[str, np.ndarray | None]], dict[str, Any]]:
    kh, kw = kernel
    oh = _out(h, kh, strides[0], dilations[0], pads[0], pads[2])
    ow = _out(w, kw, strides[1], dilations[1], pads[1], pads[3])
    inputs: list[tuple[str, np.ndarray | None]] = [
        ("x", rand(n, c, h, w, seed=seed)),
        ("w", rand(m, c // group, kh, kw, seed=seed + 1, low=-1, high=1)),
        ("offset", rand(n, og * kh * kw * 2, oh, ow, seed=seed + 2, low=-spread, high=spread)),
        ("b", rand(m, seed=seed + 3) if bias else None),
        ("mask", rand(n, og * kh * kw, oh, ow, seed=seed + 4, low=0, high=1) if mask else None),
    ]
    attrs = {"kernel_shape": list(kernel), "group": group, "offset_group": og,
             "strides": list(strides), "dilations": list(dilations), "pads": list(pads)}
    return inputs, attrs


CASES = {
    "basic": {},
    "groups": {"group": 2},
    "offset_groups": {"og": 2},
    "groups_and_offset_groups": {"group": 2, "og": 4, "m": 4},
    "mask_bias": {"mask": True, "bias": True},
    "padding": {"pads": (1, 2, 0, 1)},
    "dilation": {"dilations": (2, 1), "kernel": (2, 3)},
    "stride": {"strides": (2, 2), "pads": (1, 1, 1, 1)},
    "far_outside": {"spread": 9.0, "mask": True},
    "everything": {"group": 2, "og": 2, "mask": True, "bias": True, "strides": (2, 1),
                   "dilations": (1, 2), "pads": (2, 1, 1, 2), "kernel": (2, 2)},
}


@pytest.mark.parametrize("name", list(CASES))
def test_deform_conv(name: str) -> None:
    inputs, attrs = _case(**CASES[name])
    check_node("DeformConv", inputs, attrs, opset=19, **TOL)


def test_deform_conv_constant_weights_opset22() -> None:
    inputs, attrs = _case(mask=True, bias=True, group=2, seed=5)
    check_node("DeformConv", inputs, attrs, opset=22, constants=("w", "b"), **TOL)


def test_deform_conv_integer_offsets_are_a_convolution() -> None:
    """Integer offsets sample exact pixels (bilinear weights 0/1)."""
    inputs, attrs = _case(seed=6)
    inputs[2] = ("offset", np.round(inputs[2][1]))
    check_node("DeformConv", inputs, attrs, opset=19, **TOL)


def test_deform_conv_float16() -> None:
    inputs, attrs = _case(mask=True, bias=True, seed=7)
    inputs16 = [(k, None if v is None else v.astype(np.float16)) for k, v in inputs]
    check_node("DeformConv", inputs16, attrs, opset=19, rtol=1e-2, atol=2e-2)


def test_deform_conv_1d_is_rejected() -> None:
    model = node_model("DeformConv", [("x", rand(1, 2, 5)), ("w", rand(1, 2, 3)),
                                      ("offset", rand(1, 6, 3))], {"kernel_shape": [3]},
                       opset=19)
    with pytest.raises(ConversionFailed, match="rank-3 input is not supported"):
        converter.convert(model)
