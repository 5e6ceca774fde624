"""ONNX GatherElements, GatherND (batch_dims), ScatterElements, Scatter, ScatterND vs
onnxruntime; reductions rejected."""

from __future__ import annotations

import numpy as np
import pytest

import converter
from converter.errors import ConversionFailed
from tests.op_mappings.onnx.harness import rand
from tests.op_mappings.onnx.harness_ext import check_node, node_model

X = rand(2, 3, 4, seed=1)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_elements(axis: int) -> None:
    shape = list(X.shape)
    shape[axis] = 5
    rng = np.random.default_rng(0)
    n = X.shape[axis]
    idx = rng.integers(-n, n, size=shape).astype(np.int64)
    check_node("GatherElements", [("x", X), ("i", idx)], {"axis": axis}, opset=13)
    check_node("GatherElements", [("x", X), ("i", idx.astype(np.int32))], {"axis": axis},
               opset=13, constants=("i",))


@pytest.mark.parametrize("batch_dims", [0, 1, 2])
def test_gather_nd(batch_dims: int) -> None:
    data = rand(2, 3, 4, 5, seed=2)
    rng = np.random.default_rng(1)
    k = 2
    lead = [2, 3][:batch_dims] + [4]
    idx = np.stack([rng.integers(0, data.shape[batch_dims + j], size=lead)
                    for j in range(k)], axis=-1).astype(np.int64)
    check_node("GatherND", [("x", data), ("i", idx)], {"batch_dims": batch_dims}, opset=13)


@pytest.mark.parametrize("op", ["ScatterElements", "Scatter"])
@pytest.mark.parametrize("axis", [0, 2])
def test_scatter_elements(op: str, axis: int) -> None:
    shape = list(X.shape)
    shape[axis] = 1
    rng = np.random.default_rng(3)
    idx = rng.integers(0, X.shape[axis], size=shape).astype(np.int64)
    upd = rand(*shape, seed=4)
    check_node(op, [("x", X), ("i", idx), ("u", upd)], {"axis": axis},
               opset=10 if op == "Scatter" else 16)


def test_scatter_nd() -> None:
    idx = np.array([[1, 0], [0, 2]], np.int64)
    upd = rand(2, 4, seed=5)
    check_node("ScatterND", [("x", X), ("i", idx), ("u", upd)], opset=16)


def test_scatter_reduction_rejected() -> None:
    idx = np.array([[1, 0]], np.int64)
    model = node_model("ScatterND", [("x", X), ("i", idx), ("u", rand(1, 4))],
                       {"reduction": "add"}, opset=16)
    with pytest.raises(ConversionFailed, match="reduction"):
        converter.convert(model)
