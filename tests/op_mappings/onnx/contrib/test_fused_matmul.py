"""com.microsoft FusedMatMul (onnxruntime CPU kernel) and GemmFastGelu (CUDA/ROCm only:
checked against MatMul + Add + Gelu(tanh) in onnxruntime)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper

from tests.op_mappings.onnx.contrib.oracle import check_ms, expect_error, ms_model, rng_array
from tests.op_mappings.onnx.harness import statuses


def _operand(shape: tuple[int, ...], trans: int, trans_batch: int, seed: int) -> np.ndarray:
    """An input that op() (transBatch, then trans) turns into `shape`."""
    x = rng_array(*shape, seed=seed)
    if trans:
        x = np.swapaxes(x, -1, -2)
    if trans_batch:
        x = np.moveaxis(x, -2, 0)
    return np.ascontiguousarray(x)


@pytest.mark.parametrize("ta,tba,tb,tbb", list(itertools.product([0, 1], repeat=4)))
def test_fused_matmul_4d(ta: int, tba: int, tb: int, tbb: int) -> None:
    a = _operand((2, 3, 4, 5), ta, tba, 1)
    b = _operand((2, 3, 5, 6), tb, tbb, 2)
    attrs = {"transA": ta, "transBatchA": tba, "transB": tb, "transBatchB": tbb,
             "alpha": 0.75}
    check_ms("FusedMatMul", [("a", a), ("b", b)], attrs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ta,tb", [(0, 1), (1, 0)])
def test_transpose_matmul(ta: int, tb: int) -> None:
    """TransposeMatMul, FusedMatMul's older duplicate (onnxruntime's CPU kernel)."""
    a = _operand((2, 4, 5), ta, 0, 5)
    b = _operand((2, 5, 3), tb, 0, 6)
    check_ms("TransposeMatMul", [("a", a), ("b", b)], {"transA": ta, "transB": tb,
                                                      "alpha": 1.5}, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("tba,tbb", [(1, 0), (0, 1), (1, 1)])
def test_fused_matmul_3d_trans_batch(tba: int, tbb: int) -> None:
    a = _operand((3, 4, 5), 0, tba, 3)
    b = _operand((3, 5, 2), 1, tbb, 4)
    check_ms("FusedMatMul", [("a", a), ("b", b)],
             {"transBatchA": tba, "transBatchB": tbb, "transB": 1}, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ta,tb", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("alpha", [None, -2.5])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_fused_matmul_2d_gemm(ta: int, tb: int, alpha: float | None, dtype: str) -> None:
    a = _operand((4, 5), ta, 0, 5).astype(dtype)
    b = _operand((5, 6), tb, 0, 6).astype(dtype)
    attrs = {"transA": ta, "transB": tb} | ({} if alpha is None else {"alpha": alpha})
    res = check_ms("FusedMatMul", [("a", a), ("b", b)], attrs, constants=("b",), rtol=1e-5,
                   atol=1e-5)
    assert statuses(res)["com.microsoft::FusedMatMul"] == ["native"]  # one gemm


@pytest.mark.parametrize("sa,sb,attrs", [
    ((5,), (5, 6), {}), ((4, 5), (5,), {"alpha": 2.0}), ((5,), (6, 5), {"transB": 1}),
    ((5,), (5, 6), {"transA": 1}), ((3, 4, 5), (5, 6), {"transA": 0}),
    ((5, 4), (2, 5, 6), {"transA": 1}), ((1, 4, 5), (3, 6, 5), {"transB": 1}),
    ((5,), (5,), {"alpha": 3.0}),
])
def test_fused_matmul_broadcast_and_vectors(sa: tuple[int, ...], sb: tuple[int, ...],
                                            attrs: dict[str, Any]) -> None:
    check_ms("FusedMatMul", [("a", rng_array(*sa, seed=7)), ("b", rng_array(*sb, seed=8))],
             attrs, rtol=1e-5, atol=1e-5)


def _gemm_fast_gelu_ref(ins: list[str], outs: list[str]) -> list[onnx.NodeProto]:
    nodes = [helper.make_node("MatMul", [ins[0], ins[1]], ["mm"])]
    src = "mm"
    if len(ins) > 2 and ins[2]:
        nodes.append(helper.make_node("Add", ["mm", ins[2]], ["mmb"]))
        src = "mmb"
    return nodes + [helper.make_node("Gelu", [src], [outs[0]], approximate="tanh")]


@pytest.mark.parametrize("x_shape", [(4, 8), (2, 3, 8)])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_gemm_fast_gelu(x_shape: tuple[int, ...], bias: bool, dtype: str) -> None:
    items = [("x", rng_array(*x_shape, seed=9, low=-1, high=1).astype(dtype)),
             ("w", rng_array(8, 6, seed=10, low=-1, high=1).astype(dtype)),
             ("b", rng_array(6, seed=11).astype(dtype) if bias else None)]
    check_ms("GemmFastGelu", items, constants=("w", "b"), reference=_gemm_fast_gelu_ref,
             rtol=1e-5, atol=1e-5)


def test_malformed_nodes() -> None:
    a, b = rng_array(2, 3, 4), rng_array(2, 4, 5)
    expect_error(ms_model("FusedMatMul", [("a", a), ("b", rng_array(4, 5))],
                          {"transBatchA": 1}), "invalid_model",
                 "transBatchA/transBatchB need A and B of one rank >= 3")
    expect_error(ms_model("FusedMatMul", [("a", a), ("b", b)], {"transA": 1}),
                 "invalid_model", "inner dimensions differ")
    expect_error(ms_model("FusedMatMul", [("a", a), ("b", b)], {"transB": 2}),
                 "invalid_model", "'transB' must be 0 or 1")
    expect_error(ms_model("FusedMatMul", [("a", a)]), "invalid_model",
                 "takes 2 inputs, the node has 1")
    expect_error(ms_model("GemmFastGelu", [("x", rng_array(4, 8)), ("w", rng_array(8, 6)),
                                           ("b", rng_array(8))]),
                 "invalid_model", "bias has shape [8], expected [6]")
    expect_error(ms_model("FusedMatMul", [("a", np.array(2.0, np.float32)), ("b", b)]),
                 "invalid_model", "operands must have rank >= 1")
    expect_error(ms_model("FusedMatMul", [("a", a.astype(np.float16)), ("b", b)]),
                 "invalid_model", "B has data type float32, A has float16")
