"""ONNX GatherElements, GatherND (batch_dims), ScatterElements, Scatter, ScatterND vs
onnxruntime; reductions (add/mul/max/min) through the sequential and the one-hot forms."""

from __future__ import annotations

import numpy as np
import pytest

import converter
from converter.core.errors import ConversionFailed
from op_mappings.onnx import gather_scatter
from tests.op_mappings.onnx.harness import check_node, node_model, rand

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


REDUCTIONS = ["add", "mul", "max", "min"]


@pytest.fixture(params=["sequential", "one_hot"])
def scatter_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test through both decompositions (the one-hot one by lowering the threshold)."""
    if request.param == "one_hot":
        monkeypatch.setattr(gather_scatter, "SEQUENTIAL_MAX", 0)
    return str(request.param)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_scatter_nd_reduction(scatter_path: str, reduction: str, dtype: str) -> None:
    """Duplicate and negative index tuples, slices of rank 1, indices computed in the graph."""
    x = (rand(4, 3, 5, seed=2, low=-4, high=4)).astype(dtype)
    idx = np.array([[1, 0], [-3, 2], [3, 1], [1, 0], [1, -3]], np.int64)
    upd = rand(5, 5, seed=3, low=-4, high=4).astype(dtype)
    check_node("ScatterND", [("x", x), ("i", idx), ("u", upd)], {"reduction": reduction},
               opset=18)
    # element indices (q = rank) and batched index tuples
    idx2 = np.array([[[0, 0, 1], [3, 2, 4]], [[0, 0, 1], [2, 1, 0]]], np.int64)
    upd2 = rand(2, 2, seed=4, low=-4, high=4).astype(dtype)
    check_node("ScatterND", [("x", x), ("i", idx2), ("u", upd2)], {"reduction": reduction},
               opset=18)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_scatter_elements_reduction(scatter_path: str, reduction: str, axis: int) -> None:
    rng = np.random.default_rng(7)
    shape = list(X.shape)
    shape[axis] = 3  # duplicates along the axis are likely
    n = X.shape[axis]
    idx = rng.integers(-n, n, size=shape).astype(np.int64)
    upd = rand(*shape, seed=8)
    check_node("ScatterElements", [("x", X), ("i", idx), ("u", upd)],
               {"axis": axis, "reduction": reduction}, opset=18)
    check_node("ScatterElements", [("x", X), ("i", idx.astype(np.int32)), ("u", upd)],
               {"axis": axis, "reduction": reduction}, opset=18, constants=("i",))


def test_scatter_reduction_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gather_scatter, "SEQUENTIAL_MAX", 0)
    monkeypatch.setattr(gather_scatter, "ONE_HOT_MAX_ELEMENTS", 10)
    idx = np.array([[1, 0]], np.int64)
    model = node_model("ScatterND", [("x", X), ("i", idx), ("u", rand(1, 4))],
                       {"reduction": "add"}, opset=16)
    with pytest.raises(ConversionFailed, match="too large"):
        converter.convert(model)
