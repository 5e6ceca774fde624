"""com.microsoft HyperConnectionPreMix, HyperConnectionPostMix and EngramGate vs onnxruntime's
CPU kernels."""

from __future__ import annotations

import pytest

from tests.op_mappings.onnx.contrib.oracle import check_ms, expect_error, ms_model, rng_array

B, S, C, H = 2, 3, 4, 5


@pytest.mark.parametrize("flat", [False, True])
@pytest.mark.parametrize("mix_shape", [(B, S, C), (B, S, C, 1), (B, S, C, H)])
@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_pre_mix(flat: bool, mix_shape: tuple[int, ...], scale: float) -> None:
    x = rng_array(B, S, C * H, seed=1) if flat else rng_array(B, S, C, H, seed=1)
    attrs = {"reduction_scale": scale} | ({"num_branches": C} if flat else {})
    check_ms("HyperConnectionPreMix", [("x", x), ("m", rng_array(*mix_shape, seed=2))],
             attrs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("flat", [False, True])
@pytest.mark.parametrize("post_shape", [(B, S, C), (B, S, C, H)])
@pytest.mark.parametrize("stream_mix", [False, True])
def test_post_mix(flat: bool, post_shape: tuple[int, ...], stream_mix: bool) -> None:
    x = rng_array(B, S, C * H, seed=3) if flat else rng_array(B, S, C, H, seed=3)
    items = [("x", x), ("o", rng_array(B, S, H, seed=4)), ("p", rng_array(*post_shape, seed=5)),
             ("sm", rng_array(B, S, C, C, seed=6) if stream_mix else None)]
    check_ms("HyperConnectionPostMix", items, {"num_branches": C} if flat else {},
             rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("normed", [False, True])
def test_engram_gate(normed: bool) -> None:
    items = [("k", rng_array(B, S, C, H, seed=7)), ("q", rng_array(B, S, C, H, seed=8)),
             ("v", rng_array(B, S, H, seed=9)), ("ks", rng_array(C, H, seed=10)),
             ("qs", rng_array(C, H, seed=11)),
             ("cs", rng_array(C, H, seed=12) if normed else None)]
    check_ms("EngramGate", items, outputs=("y", "yn") if normed else ("y",), rtol=1e-5,
             atol=1e-5)


def test_malformed_nodes() -> None:
    expect_error(ms_model("HyperConnectionPreMix", [("x", rng_array(B, S, C, H)),
                                                    ("m", rng_array(B, S, H))]),
                 "invalid_model", "pre_mix [2, 3, 5] must be")
