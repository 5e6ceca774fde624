"""ONNX OneHot (axis, negative and float indices) and EyeLike (k, dtype) vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check_node, invalid, rand


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("itype", ["int64", "int32", "float32"])
def test_one_hot(axis: int, itype: str) -> None:
    idx = np.array([[0, 3, -1], [2, -4, 7]]).astype(itype)
    values = np.array([-2.0, 5.0], np.float32)
    depth = np.array(4, {"int64": np.int64, "int32": np.int32, "float32": np.float32}[itype])
    check_node("OneHot", [("i", idx), ("depth", depth), ("v", values)],
               {"axis": axis}, opset=11, constants=("depth",))


@pytest.mark.parametrize("k", [-1, 0, 2])
@pytest.mark.parametrize("dtype", [None, 1, 7])
def test_eye_like(k: int, dtype: int | None) -> None:
    attrs = {"k": k} | ({} if dtype is None else {"dtype": dtype})
    check_node("EyeLike", [("x", rand(3, 5))], attrs, opset=9)


@pytest.mark.parametrize("depth, values, words", [
    (np.array(0), np.array([0, 1], np.float32), "depth (input 1) is 0, it must be at least 1"),
    (np.array(np.nan), np.array([0, 1], np.float32), "depth (input 1) is nan"),
    (np.zeros(0), np.array([0, 1], np.float32), "depth (input 1) must hold one value"),
    (np.array(3), np.array([0, 1, 2], np.float32), "values (input 2) must be [off, on]"),
    (np.array(3), np.array([[0, 1]], np.float32), "values (input 2) must be [off, on]"),
])
def test_one_hot_malformed(depth: np.ndarray, values: np.ndarray, words: str) -> None:
    inputs = {"i": np.array([0, 2], np.int64), "d": depth, "v": values}
    assert words in invalid("OneHot", inputs, constants=["d", "v"])
