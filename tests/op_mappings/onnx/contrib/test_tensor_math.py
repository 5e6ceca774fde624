"""com.microsoft CDist, Inverse and UnfoldTensor vs onnxruntime's CPU kernels; TorchEmbedding
(CUDA only) vs Gather in onnxruntime; ComplexMul / ComplexMulConj (CUDA only) and IsAllFinite
(CUDA only) vs float64 numpy written from the schemas."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from tests.op_mappings.onnx.contrib.oracle import (
    check_ms,
    compare,
    expect_error,
    ms_model,
    rng_array,
)


@pytest.mark.parametrize("metric", ["sqeuclidean", "euclidean"])
def test_cdist(metric: str) -> None:
    check_ms("CDist", [("a", rng_array(5, 7, seed=1)), ("b", rng_array(4, 7, seed=2))],
             {"metric": metric}, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5])
def test_inverse(m: int) -> None:
    x = rng_array(2, 3, m, m, seed=m, low=-1, high=1) + 3 * np.eye(m, dtype=np.float32)
    check_ms("Inverse", [("x", x)], rtol=1e-4, atol=1e-5)


def test_inverse_float16() -> None:
    x = (rng_array(2, 3, 3, seed=9, low=-1, high=1) + 3 * np.eye(3)).astype(np.float16)
    check_ms("Inverse", [("x", x)], rtol=5e-3, atol=2e-3)


@pytest.mark.parametrize("conj", [False, True])
@pytest.mark.parametrize("shapes", [((2, 3, 2), (2, 3, 2)), ((2, 1, 2), (4, 2))])
def test_complex_mul(conj: bool, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    a, b = rng_array(*shapes[0], seed=3), rng_array(*shapes[1], seed=4)
    ca = a[..., 0].astype(np.float64) + 1j * a[..., 1]
    cb = b[..., 0].astype(np.float64) + 1j * b[..., 1]
    c = ca * (np.conj(cb) if conj else cb)
    want = np.stack([c.real, c.imag], axis=-1).astype(np.float32)
    op = "ComplexMulConj" if conj else "ComplexMul"
    compare(ms_model(op, [("a", a), ("b", b)]), {"a": a, "b": b}, {"y": want}, op, 1e-5,
            1e-5)


def test_torch_embedding() -> None:
    weight = rng_array(10, 4, seed=5)
    idx = np.array([[0, 3, 9], [2, 2, 1]], np.int64)
    items = [("w", weight), ("i", idx), ("p", np.array(1, np.int64))]
    check_ms("TorchEmbedding", items, constants=("w", "p"),
             reference=lambda ins, outs: [helper.make_node("Gather", ins[:2], outs)],
             rtol=0, atol=0)


@pytest.mark.parametrize("dim,size,step", [(-1, 3, 2), (1, 2, 1), (0, 2, 1), (2, 6, 1),
                                           (2, 1, 4)])
def test_unfold_tensor(dim: int, size: int, step: int) -> None:
    check_ms("UnfoldTensor", [("x", rng_array(2, 3, 6, seed=6))],
             {"dim": dim, "size": size, "step": step}, rtol=0, atol=0)


@pytest.mark.parametrize("attrs", [{}, {"isnan_only": 1}, {"isinf_only": 1}])
@pytest.mark.parametrize("bad", [None, np.nan, np.inf])
def test_is_all_finite(attrs: dict[str, int], bad: float | None) -> None:
    a, b = rng_array(2, 3, seed=7), rng_array(4, seed=8)
    if bad is not None:
        b[2] = bad
    if attrs.get("isnan_only"):
        want = not np.isnan(b).any()
    elif attrs.get("isinf_only"):
        want = not np.isinf(b).any()
    else:
        want = bool(np.isfinite(b).all())
    model = ms_model("IsAllFinite", [("a", a), ("b", b)], attrs)
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", TensorProto.BOOL, []))
    compare(model, {"a": a, "b": b}, {"y": np.array(want)}, "IsAllFinite", 0, 0)


def test_malformed_nodes() -> None:
    expect_error(ms_model("CDist", [("a", rng_array(2, 3)), ("b", rng_array(2, 4))]),
                 "invalid_model", "must be [M, K] and [N, K]")
    expect_error(ms_model("Inverse", [("x", rng_array(6, 6))]), "unsupported_attribute",
                 "at most 5x5")
    expect_error(ms_model("UnfoldTensor", [("x", rng_array(2, 3))], {"size": 4}),
                 "invalid_model", "size 4 and step 1")


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_ngram_repeat_block(n: int) -> None:
    ids = np.array([[1, 2, 3, 1, 2, 3], [4, 4, 4, 4, 0, 4]], np.int64)
    check_ms("NGramRepeatBlock", [("ids", ids), ("s", rng_array(2, 6, seed=9))],
             {"ngram_size": n}, rtol=0, atol=0)
