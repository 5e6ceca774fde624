"""ONNX Col2Im vs onnxruntime (1-D, 2-D with strides/dilations/pads, 3-D; several channels)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check_node, rand


def _blocks(image: list[int], block: list[int], attrs: dict[str, Any]) -> int:
    n = len(image)
    s = attrs.get("strides", [1] * n)
    d = attrs.get("dilations", [1] * n)
    p = attrs.get("pads", [0] * (2 * n))
    return int(np.prod([(image[i] + p[i] + p[n + i] - (d[i] * (block[i] - 1) + 1)) // s[i] + 1
                        for i in range(n)]))


@pytest.mark.parametrize("image,block,attrs", [
    ([5, 5], [2, 2], {}),
    ([6, 6], [2, 2], {"dilations": [1, 3]}),
    ([5, 5], [1, 5], {"pads": [0, 1, 0, 1]}),
    ([5, 5], [3, 3], {"strides": [2, 2]}),
    ([6, 7], [2, 3], {"strides": [2, 1], "pads": [1, 0, 1, 2], "dilations": [2, 1]}),
    ([9], [3], {"strides": [2]}),
    ([3, 4, 5], [2, 2, 2], {}),
    ([4, 4, 5], [2, 1, 2], {"strides": [2, 1, 1], "pads": [0, 1, 0, 0, 1, 1]}),
], ids=str)
def test_col2im(image: list[int], block: list[int], attrs: dict[str, Any]) -> None:
    c = 2
    x = rand(2, c * int(np.prod(block)), _blocks(image, block, attrs), seed=len(image))
    check_node("Col2Im", [("x", x), ("img", np.array(image, np.int64)),
                          ("blk", np.array(block, np.int64))], attrs, opset=18,
               constants=("img", "blk"), rtol=1e-5, atol=1e-5)
