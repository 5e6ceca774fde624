"""ONNX MaxUnpool vs onnxruntime (indices from a real MaxPool; 1-D and 2-D, strides, pads) and,
with an output_shape larger than the inferred one, vs the ONNX reference's definition written
in numpy (onnxruntime reads the indices in the output_shape frame instead)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check_node, node_model, rand, run_ort


def _pooled(shape: tuple[int, ...], attrs: dict[str, Any]) -> dict[str, np.ndarray]:
    x = rand(*shape, seed=3)
    pool = node_model("MaxPool", [("x", x)], attrs, opset=12, outputs=("v", "i"))
    return run_ort(pool, {"x": x})


@pytest.mark.parametrize("shape,attrs", [
    ((2, 3, 4, 4), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ((1, 2, 7, 6), {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 0, 1, 0]}),
    ((1, 2, 9), {"kernel_shape": [3], "strides": [3]}),
], ids=str)
def test_max_unpool(shape: tuple[int, ...], attrs: dict[str, Any]) -> None:
    pooled = _pooled(shape, attrs)
    check_node("MaxUnpool", [("v", pooled["v"]), ("i", pooled["i"])], attrs, opset=11)


def test_max_unpool_output_shape() -> None:
    import converter

    attrs = {"kernel_shape": [2, 2], "strides": [2, 2]}
    pooled = _pooled((2, 3, 4, 4), attrs)
    items = [("v", pooled["v"]), ("i", pooled["i"]), ("o", np.array([2, 3, 5, 6], np.int64))]
    model = node_model("MaxUnpool", items, attrs, opset=11, constants=("o",))
    got = converter.convert(model).run({"v": pooled["v"], "i": pooled["i"]})["y"]
    inferred = np.zeros(2 * 3 * 4 * 4, np.float32)
    inferred[pooled["i"].reshape(-1)] = pooled["v"].reshape(-1)
    want = np.zeros((2, 3, 5, 6), np.float32)
    want[:, :, :4, :4] = inferred.reshape(2, 3, 4, 4)
    np.testing.assert_array_equal(got, want)
