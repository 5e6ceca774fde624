"""ONNX Pad / CenterCropPad vs onnxruntime: every mode, negative pads, axes, computed
constant_value, large reflect/wrap pads, opsets 2/11/18/19."""

from __future__ import annotations

import numpy as np
import pytest

import converter
from tests.op_mappings.onnx.harness import check_node, node_model, rand

X = rand(2, 3, 4, seed=2)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
@pytest.mark.parametrize("pads", [[0, 1, 2, 1, 0, 1], [1, 2, 3, 0, 2, 3], [0, -1, 2, 1, 1, -2],
                                  [0, 5, 7, 0, 4, 9]])
def test_pad19(mode: str, pads: list[int]) -> None:
    if mode == "reflect" and pads[2] >= 2:
        pytest.skip("onnxruntime rejects reflect pads >= the (cropped) size: see test below")
    items = [("x", X), ("pads", np.array(pads, np.int64)),
             ("value", np.array(1.5, np.float32) if mode == "constant" else None)]
    check_node("Pad", items, {"mode": mode}, opset=19, constants=("pads", "value"))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad11_and_2(mode: str) -> None:
    pads = np.array([1, 0, 2, 0, 1, 1], np.int64)
    check_node("Pad", [("x", X), ("pads", pads)], {"mode": mode}, opset=11,
               constants=("pads",))
    check_node("Pad", [("x", X)], {"mode": mode, "pads": pads.tolist(), "value": -2.0},
               opset=2)


def test_pad18_axes_and_computed_value() -> None:
    items = [("x", X), ("pads", np.array([1, 2, 3, -1], np.int64)),
             ("value", np.array(4.0, np.float32)), ("axes", np.array([-1, 1], np.int64))]
    check_node("Pad", items, {"mode": "constant"}, opset=18, constants=("pads", "axes"))


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64"])
def test_pad_integers(dtype: str) -> None:
    x = rand(3, 4, seed=5, low=0, high=50).astype(dtype)
    items = [("x", x), ("pads", np.array([1, 2, 2, 1], np.int64)),
             ("value", np.array(7, dtype))]
    check_node("Pad", items, {"mode": "constant"}, opset=13, constants=("pads", "value"))
    check_node("Pad", items[:2], {"mode": "reflect"}, opset=13, constants=("pads",))


@pytest.mark.parametrize("shape", [[2, 2, 6], [2, 5, 1], [1, 4, 4], [3, 3, 7]])
def test_center_crop_pad(shape: list[int]) -> None:
    check_node("CenterCropPad", [("x", X), ("shape", np.array(shape, np.int64))], opset=18,
               constants=("shape",))


def test_center_crop_pad_axes() -> None:
    check_node("CenterCropPad", [("x", X), ("shape", np.array([1, 5], np.int64))],
               {"axes": [2, 1]}, opset=18, constants=("shape",))


def test_reflect_larger_than_input_numpy_oracle() -> None:
    """onnxruntime rejects reflect pads >= the dimension; numpy's reflect pattern is used."""
    pads = [0, 5, 7, 0, 4, 9]
    model = node_model("Pad", [("x", X), ("pads", np.array(pads, np.int64))],
                       {"mode": "reflect"}, opset=19, constants=("pads",))
    got = converter.convert(model).run({"x": X})["y"]
    np.testing.assert_array_equal(got, np.pad(X, [(0, 0), (5, 4), (7, 9)], mode="reflect"))
