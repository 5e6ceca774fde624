"""com.microsoft CausalConvWithState, LinearAttentionGate and LinearAttention vs onnxruntime's
CPU kernels; VarlenCausalConvWithState vs CausalConvWithState run per sequence."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.op_mappings.onnx.contrib.oracle import (
    check_ms,
    compare,
    expect_error,
    ms_model,
    rng_array,
)
from tests.op_mappings.onnx.harness import run_ort


@pytest.mark.parametrize("k,dilation", [(3, 1), (4, 2), (2, 1)])
@pytest.mark.parametrize("past", [True, False])
@pytest.mark.parametrize("activation", ["none", "silu"])
def test_causal_conv_with_state(k: int, dilation: int, past: bool, activation: str) -> None:
    state = (k - 1) * dilation
    items = [("x", rng_array(2, 6, 5, seed=1)), ("w", rng_array(6, 1, k, seed=2)),
             ("b", rng_array(6, seed=3)),
             ("p", rng_array(2, 6, state, seed=4) if past else None)]
    check_ms("CausalConvWithState", items, {"dilation": dilation, "activation": activation},
             outputs=("y", "state"), constants=("w", "b"), rtol=1e-5, atol=1e-5)


def test_causal_conv_channels_last() -> None:
    items = [("x", rng_array(2, 5, 2, 3, seed=5)), ("w", rng_array(6, 1, 3, seed=6)),
             ("b", None), ("p", rng_array(2, 2, 2, 3, seed=7))]
    check_ms("CausalConvWithState", items, {"channels_last": 1}, outputs=("y", "state"),
             constants=("w",), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("beta", [True, False])
def test_linear_attention_gate(beta: bool) -> None:
    items = [("a", rng_array(2, 3, 4, seed=8)), ("dt", rng_array(4, seed=9)),
             ("ds", rng_array(4, seed=10, low=-2, high=0)),
             ("b", rng_array(2, 3, 4, seed=11) if beta else None)]
    check_ms("LinearAttentionGate", items, outputs=("decay", "beta") if beta else ("decay",),
             constants=("dt", "ds"), rtol=1e-5, atol=1e-6)


def _la_items(b: int, t: int, hq: int, hk: int, hkv: int, dk: int, dv: int, past: bool,
              decay: str, beta: str) -> list[tuple[str, np.ndarray | None]]:
    decay_last = {"head": hkv, "key": hkv * dk, "none": 0}[decay]
    beta_last = {"head": hkv, "one": 1, "none": 0}[beta]
    return [("q", rng_array(b, t, hq * dk, seed=12, low=-1, high=1)),
            ("k", rng_array(b, t, hk * dk, seed=13, low=-0.5, high=0.5)),
            ("v", rng_array(b, t, hkv * dv, seed=14, low=-1, high=1)),
            ("p", rng_array(b, hkv, dk, dv, seed=15, low=-0.5, high=0.5) if past else None),
            ("d", rng_array(b, t, decay_last, seed=16, low=-1, high=0) if decay_last else None),
            ("bt", rng_array(b, t, beta_last, seed=17, low=0, high=1) if beta_last else None)]


@pytest.mark.parametrize("rule,decay,beta", [
    ("linear", "none", "none"), ("gated", "head", "none"), ("gated", "key", "none"),
    ("delta", "none", "head"), ("delta", "none", "one"), ("gated_delta", "head", "head"),
    ("gated_delta", "key", "one")])
@pytest.mark.parametrize("t,past", [(1, True), (4, True), (3, False)])
def test_linear_attention(rule: str, decay: str, beta: str, t: int, past: bool) -> None:
    items = _la_items(2, t, 2, 2, 2, 4, 3, past, decay, beta)
    attrs: dict[str, Any] = {"q_num_heads": 2, "kv_num_heads": 2, "update_rule": rule}
    check_ms("LinearAttention", items, attrs, outputs=("y", "state"), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("hq,hk", [(2, 2), (2, 4), (4, 2)])
def test_linear_attention_grouped_heads(hq: int, hk: int) -> None:
    """Fewer query / key heads than value heads (Qwen3.5's layout)."""
    items = _la_items(1, 3, hq, hk, 4, 4, 2, True, "head", "head")
    attrs = {"q_num_heads": hq, "kv_num_heads": 4, "scale": 0.7}
    check_ms("LinearAttention", items, attrs, outputs=("y", "state"), rtol=1e-4, atol=1e-5)


def test_malformed_nodes() -> None:
    items = _la_items(1, 2, 2, 2, 2, 4, 3, False, "none", "none")
    expect_error(ms_model("LinearAttention", items, {"q_num_heads": 2, "kv_num_heads": 2},
                          outputs=("y", "state")),
                 "invalid_model", "update_rule gated_delta needs decay")
    expect_error(ms_model("CausalConvWithState", [("x", rng_array(2, 6, 5)),
                                                  ("w", rng_array(6, 1, 3))],
                          {"ndim": 2}, outputs=("y", "state")),
                 "unsupported_attribute", "ndim 1 and state_window 0")


@pytest.mark.parametrize("lengths", [[3, 1, 4], [5], [1, 1]])
@pytest.mark.parametrize("k,dilation", [(3, 1), (2, 2)])
@pytest.mark.parametrize("activation", ["none", "silu"])
def test_varlen_causal_conv_with_state(lengths: list[int], k: int, dilation: int,
                                       activation: str) -> None:
    """vs onnxruntime's CausalConvWithState CPU kernel run on each sequence on its own (the
    varlen op has CUDA / WebGPU kernels only)."""
    channels, span = 4, (k - 1) * dilation
    total, bsz = sum(lengths), len(lengths)
    x = rng_array(total, channels, seed=20)
    w, bias = rng_array(channels, 1, k, seed=21), rng_array(channels, seed=22)
    state = rng_array(bsz, channels, span, seed=23)
    attrs = {"dilation": dilation, "activation": activation}
    outs, finals, start = [], [], 0
    for i, n in enumerate(lengths):
        seq = np.ascontiguousarray(x[start:start + n].T[None])  # [1, C, n]
        model = ms_model("CausalConvWithState", [("x", seq), ("w", w), ("b", bias),
                                                 ("p", state[i:i + 1])], attrs,
                         outputs=("y", "state"), constants=("w", "b"))
        got = run_ort(model, {"x": seq, "p": state[i:i + 1]})
        outs.append(got["y"][0].T)
        finals.append(got["state"][0])
        start += n
    cum = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    items = [("x", x), ("w", w), ("cum", cum), ("b", bias), ("s0", state)]
    model = ms_model("VarlenCausalConvWithState", items, attrs, outputs=("y", "state"),
                     constants=("w", "b"))
    compare(model, {"x": x, "cum": cum, "s0": state},
            {"y": np.concatenate(outs), "state": np.stack(finals)},
            "VarlenCausalConvWithState", 1e-5, 1e-5)
