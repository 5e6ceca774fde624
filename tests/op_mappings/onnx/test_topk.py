"""ONNX TopK vs onnxruntime: k, axis, largest/smallest, ties, integer inputs, opsets."""

from __future__ import annotations

import numpy as np
import pytest

import converter
from tests.op_mappings.onnx.harness import check_node, node_model, rand

X = np.round(rand(3, 6, 4, seed=1, low=-4, high=4))  # rounded: many ties


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("largest", [0, 1])
def test_topk(axis: int, k: int, largest: int) -> None:
    check_node("TopK", [("x", X), ("k", np.array([k], np.int64))],
               {"axis": axis, "largest": largest}, opset=11, outputs=("v", "i"),
               constants=("k",))


@pytest.mark.parametrize("dtype", ["int32", "int64", "float16"])
def test_topk_types(dtype: str) -> None:
    check_node("TopK", [("x", X.astype(dtype)), ("k", np.array([4], np.int64))], opset=11,
               outputs=("v", "i"), constants=("k",))


def test_topk_opset1_and_10() -> None:
    check_node("TopK", [("x", X)], {"k": 2}, opset=1, outputs=("v", "i"))
    check_node("TopK", [("x", X), ("k", np.array([4], np.int64))], opset=10,
               outputs=("v", "i"), constants=("k",))


def test_topk_unsorted_same_set() -> None:
    model = node_model("TopK", [("x", rand(2, 7, seed=4)), ("k", np.array([3], np.int64))],
                       {"sorted": 0}, opset=11, outputs=("v", "i"), constants=("k",))
    x = rand(2, 7, seed=4)
    got = converter.convert(model).run({"x": x})
    ref = np.sort(x, axis=1)[:, ::-1][:, :3]
    np.testing.assert_array_equal(np.sort(got["v"], axis=1)[:, ::-1], ref)
