"""com.microsoft GatedRMSNorm, BranchwiseRMSNorm and GatedAdd vs onnxruntime's CPU kernels."""

from __future__ import annotations

import pytest

from tests.op_mappings.onnx.contrib.oracle import check_ms, expect_error, ms_model, rng_array

X = rng_array(2, 3, 12, seed=1)


@pytest.mark.parametrize("act", ["silu", "swish", "sigmoid"])
@pytest.mark.parametrize("groups", [1, 3])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_gated_rms_norm(act: str, groups: int, dtype: str) -> None:
    items = [("x", X.astype(dtype)), ("s", rng_array(12 // groups, seed=2).astype(dtype)),
             ("g", rng_array(2, 3, 12, seed=3).astype(dtype))]
    tol = (1e-5, 1e-5) if dtype == "float32" else (2e-3, 5e-3)
    check_ms("GatedRMSNorm", items, {"activation": act, "epsilon": 1e-3}, constants=("s",),
             rtol=tol[0], atol=tol[1])


@pytest.mark.parametrize("shape,branches,scale", [
    ((2, 3, 4), 0, None), ((2, 3, 4), 0, (3, 4)), ((2, 3, 4), 0, (4,)),
    ((2, 12), 3, (12,)), ((2, 12), 3, None), ((2, 5, 12), 4, (4, 3))])
def test_branchwise_rms_norm(shape: tuple[int, ...], branches: int,
                             scale: tuple[int, ...] | None) -> None:
    items = [("x", rng_array(*shape, seed=4)),
             ("s", None if scale is None else rng_array(*scale, seed=5))]
    attrs = {"num_branches": branches} if branches else {}
    check_ms("BranchwiseRMSNorm", items, attrs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_gated_add(dtype: str) -> None:
    items = [("x", X.astype(dtype)), ("y2", rng_array(2, 3, 12, seed=6).astype(dtype)),
             ("g", rng_array(2, 3, 1, seed=7).astype(dtype))]
    check_ms("GatedAdd", items, rtol=1e-3 if dtype == "float16" else 1e-6, atol=1e-6)


def test_malformed_nodes() -> None:
    expect_error(ms_model("GatedRMSNorm", [("x", X), ("s", X[0, 0, :5]), ("g", X)]),
                 "invalid_model", "must be 1-D with a length dividing")
    expect_error(ms_model("GatedRMSNorm", [("x", X), ("s", X[0, 0]), ("g", X)],
                          {"activation": "relu"}),
                 "unsupported_attribute", "activation 'relu'")
    expect_error(ms_model("GatedAdd", [("x", X), ("y2", X), ("g", X)]), "invalid_model",
                 "gate [2, 3, 12]")
    expect_error(ms_model("BranchwiseRMSNorm", [("x", X)], {"num_branches": 5}),
                 "invalid_model", "num_branches 5 must divide")
