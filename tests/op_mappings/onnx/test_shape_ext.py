"""ONNX Trilu, GatherElements, GatherND (batch_dims), ScatterElements, ScatterND, Scatter,
OneHot, EyeLike, CumSum, CumProd, DepthToSpace, SpaceToDepth, ReverseSequence vs
onnxruntime (CumProd: a numpy oracle when onnxruntime lacks opset 26)."""

from __future__ import annotations

import numpy as np
import pytest

import converter
from converter.errors import ConversionFailed
from tests.op_mappings.onnx.harness import rand
from tests.op_mappings.onnx.harness_ext import check_node, node_model

X = rand(2, 3, 4, seed=1)


@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [None, -1, 0, 2])
def test_trilu(upper: int, k: int | None) -> None:
    kk = None if k is None else np.array(k, np.int64)
    check_node("Trilu", [("x", X), ("k", kk)], {"upper": upper}, opset=14, constants=("k",))


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


@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_cum_sum(exclusive: int, reverse: int, dtype: str) -> None:
    x = (X * 10).astype(dtype)
    check_node("CumSum", [("x", x), ("axis", np.array(-2, np.int32))],
               {"exclusive": exclusive, "reverse": reverse}, opset=14, constants=("axis",),
               rtol=1e-5)


@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("n", [1, 5, 8])
def test_cum_prod_numpy_oracle(exclusive: int, reverse: int, n: int) -> None:
    x = np.random.default_rng(n).integers(-3, 4, size=(2, n)).astype(np.int64)
    model = node_model("CumProd", [("x", x), ("axis", np.array(1, np.int64))],
                       {"exclusive": exclusive, "reverse": reverse}, opset=26,
                       constants=("axis",))
    got = converter.convert(model).run({"x": x})["y"]
    v = x[:, ::-1] if reverse else x
    if exclusive:
        v = np.concatenate([np.ones((2, 1), np.int64), v[:, :-1]], axis=1)
    ref = np.cumprod(v, axis=1)
    np.testing.assert_array_equal(got, ref[:, ::-1] if reverse else ref)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space(mode: str) -> None:
    check_node("DepthToSpace", [("x", rand(2, 8, 3, 2))], {"blocksize": 2, "mode": mode},
               opset=13)


def test_space_to_depth() -> None:
    check_node("SpaceToDepth", [("x", rand(2, 3, 4, 6))], {"blocksize": 2}, opset=13)


@pytest.mark.parametrize("axes", [(0, 1), (1, 0)])
def test_reverse_sequence(axes: tuple[int, int]) -> None:
    t_axis, b_axis = axes
    x = rand(4, 3, 2, seed=6) if t_axis == 0 else rand(3, 4, 2, seed=6)
    lens = np.array([4, 1, 3], np.int64)
    check_node("ReverseSequence", [("x", x), ("lens", lens)],
               {"time_axis": t_axis, "batch_axis": b_axis}, opset=10, constants=("lens",))
