"""Torch conv2d / convTranspose2d vs the reference backend for what WPT covers less: every
filter layout with a non-constant filter, groups and depthwise, asymmetric padding,
dilations, outputPadding / outputSizes reaching past the full transposed output, float16."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("torch")

from converter.core.webnn import MLGraphBuilder, MLOperand  # noqa: E402
from tests.converter.runtimes.torch.common import compare, rand  # noqa: E402

Ops = dict[str, MLOperand]

_FROM_OIHW = {"oihw": (0, 1, 2, 3), "hwio": (2, 3, 1, 0), "ohwi": (0, 2, 3, 1),
              "ihwo": (1, 2, 3, 0)}
_FROM_IOHW = {"iohw": (0, 1, 2, 3), "hwoi": (2, 3, 1, 0), "ohwi": (1, 2, 3, 0)}

CONV: list[dict[str, Any]] = [
    {"groups": 1, "padding": [1, 2, 0, 1], "strides": [2, 1], "dilations": [1, 2]},
    {"groups": 2, "padding": [1, 1, 1, 1]},
    {"groups": 4, "strides": [2, 2], "padding": [0, 1, 1, 0]},  # depthwise
    {"groups": 1, "input_layout": "nhwc", "dilations": [2, 2]},
]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("layout", list(_FROM_OIHW))
@pytest.mark.parametrize("variant", range(len(CONV)))
def test_conv2d(variant: int, layout: str, dtype: str) -> None:
    opts = dict(CONV[variant])
    g = opts["groups"]
    nhwc = opts.get("input_layout") == "nhwc"
    x = rand((1, 7, 8, 4) if nhwc else (1, 4, 7, 8), dtype)
    w = rand((4, 4 // g, 3, 2), dtype).transpose(_FROM_OIHW[layout]).copy()
    bias = rand((4,), dtype)

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        return {"y": b.conv2d(o["x"], o["w"], filter_layout=layout, bias=o["b"], **opts),
                "k": b.conv2d(o["x"], b.constant(w), filter_layout=layout, **opts)}

    compare({"x": x, "w": w, "b": bias}, build, f16_ulp=8, rtol=1e-5, atol=1e-5)


CONV_T: list[dict[str, Any]] = [
    {"groups": 1, "strides": [2, 2], "padding": [1, 0, 0, 1]},
    {"groups": 2, "strides": [2, 3], "output_padding": [1, 2], "dilations": [1, 2]},
    {"groups": 1, "strides": [2, 2], "output_sizes": [10, 9], "padding": [0, 0, 1, 1]},
    {"groups": 4, "input_layout": "nhwc", "padding": [1, 1, 1, 1]},
]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("layout", list(_FROM_IOHW))
@pytest.mark.parametrize("variant", range(len(CONV_T)))
def test_conv_transpose2d(variant: int, layout: str, dtype: str) -> None:
    opts = dict(CONV_T[variant])
    g = opts["groups"]
    nhwc = opts.get("input_layout") == "nhwc"
    x = rand((2, 4, 5, 4) if nhwc else (2, 4, 4, 5), dtype)
    w = rand((4, 8 // g, 3, 3), dtype).transpose(_FROM_IOHW[layout]).copy()
    bias = rand((8,), dtype)

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        return {"y": b.conv_transpose2d(o["x"], o["w"], filter_layout=layout, bias=o["b"],
                                        **opts),
                "k": b.conv_transpose2d(o["x"], b.constant(w), filter_layout=layout, **opts)}

    compare({"x": x, "w": w, "b": bias}, build, f16_ulp=8, rtol=1e-5, atol=1e-5)
