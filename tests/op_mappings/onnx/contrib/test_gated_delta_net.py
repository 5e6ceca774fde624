"""com.microsoft GatedDeltaNet (CUDA / WebGPU only) vs float64 numpy written from the schema's
recurrence: S_t = exp(g_t)·S + k_t (β_t (v_t - exp(g_t)·Sᵀk_t))ᵀ, o_t = scale·S_tᵀq_t, per
value head, with the qwen gate and sigmoid beta activations."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.op_mappings.onnx.contrib.oracle import compare, expect_error, ms_model, rng_array

B, S, HQ, HV, DK, DV = 2, 3, 2, 4, 4, 3


def _expected(q: np.ndarray, k: np.ndarray, v: np.ndarray, g: np.ndarray | None,
              beta: np.ndarray | None, s0: np.ndarray, scale: float
              ) -> tuple[np.ndarray, np.ndarray]:
    """q, k [B, S, Hq, dk], v [B, S, Hv, dv], g / beta [B, S, Hv], s0 [B, Hv, dv, dk]."""
    group = HV // HQ
    state = s0.astype(np.float64).transpose(0, 1, 3, 2).copy()  # [B, Hv, dk, dv]
    out = np.zeros((B, S, HV, DV))
    for bi in range(B):
        for t in range(S):
            for h in range(HV):
                qt, kt = q[bi, t, h // group].astype(np.float64), k[bi, t, h // group]
                st = state[bi, h]
                if g is not None:
                    st *= np.exp(g[bi, t, h])
                if beta is not None:
                    st += np.outer(kt, beta[bi, t, h] * (v[bi, t, h] - st.T @ kt))
                else:
                    st += np.outer(kt, v[bi, t, h])
                out[bi, t, h] = scale * st.T @ qt
    return out, state.transpose(0, 1, 3, 2)


@pytest.mark.parametrize("rule", ["linear", "gated", "delta", "gated_delta"])
@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("activations", [False, True])
def test_gated_delta_net(rule: str, rank: int, activations: bool) -> None:
    q = rng_array(B, S, HQ, DK, seed=1, low=-1, high=1)
    k = rng_array(B, S, HQ, DK, seed=2, low=-0.5, high=0.5)
    v = rng_array(B, S, HV, DV, seed=3)
    decay = rng_array(B, S, HV, seed=4, low=-1, high=0)
    beta = rng_array(B, S, HV, seed=5, low=0, high=1)
    a_log, dt_bias = rng_array(HV, seed=6), rng_array(HV, seed=7)
    s0 = rng_array(B, HV, DV, DK, seed=8)
    g = decay.astype(np.float64)
    bt = beta.astype(np.float64)
    if activations:
        g = -np.exp(a_log.astype(np.float64)) * np.log1p(np.exp(g + dt_bias))
        bt = 1 / (1 + np.exp(-bt))
    gated, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    want_y, want_s = _expected(q, k, v, g if gated else None, bt if delta else None, s0,
                               1 / np.sqrt(DK))
    shape = (lambda x: x) if rank == 4 else (lambda x: x.reshape(B * S, *x.shape[2:]))
    items: list[tuple[str, np.ndarray | None]] = [
        ("q", shape(q)), ("k", shape(k)), ("v", shape(v)), ("cu", None),
        ("d", shape(decay) if gated else None), ("b", shape(beta) if delta else None),
        ("s0", s0), ("alog", a_log if activations and gated else None),
        ("dtb", dt_bias if activations and gated else None)]
    attrs: dict[str, Any] = {"update_rule": rule}
    if activations:
        attrs |= {"gate_activation": "qwen", "beta_activation": "sigmoid"}
    model = ms_model("GatedDeltaNet", items, attrs, outputs=("y", "state"),
                     constants=("alog", "dtb"))
    feeds = {n: a for n, a in items if a is not None and n not in ("alog", "dtb")}
    expected = {"y": shape(want_y).astype(np.float32), "state": want_s.astype(np.float32)}
    compare(model, feeds, expected, "GatedDeltaNet", 1e-4, 1e-5)


def test_packed_qkv() -> None:
    q = rng_array(B * S, HQ * DK, seed=1)
    k = rng_array(B * S, HQ * DK, seed=2, low=-0.5, high=0.5)
    v = rng_array(B * S, HV * DV, seed=3)
    s0 = rng_array(B, HV, DV, DK, seed=8)
    want_y, want_s = _expected(q.reshape(B, S, HQ, DK), k.reshape(B, S, HQ, DK),
                               v.reshape(B, S, HV, DV), None, None, s0, 0.5)
    packed = np.concatenate([q, k, v], axis=1)
    items = [("qkv", packed), ("k", None), ("v", None), ("cu", None), ("d", None),
             ("b", None), ("s0", s0)]
    model = ms_model("GatedDeltaNet", items, {"update_rule": "linear", "scale": 0.5},
                     outputs=("y", "state"))
    compare(model, {"qkv": packed, "s0": s0},
            {"y": want_y.reshape(B * S, HV, DV).astype(np.float32),
             "state": want_s.astype(np.float32)}, "GatedDeltaNet", 1e-4, 1e-5)


def test_malformed_nodes() -> None:
    items = [("q", rng_array(B * S, HQ, DK)), ("k", rng_array(B * S, HQ, DK)),
             ("v", rng_array(B * S, HV, DV)), ("cu", np.array([0, 3, 6], np.int32))]
    expect_error(ms_model("GatedDeltaNet", items, {"update_rule": "linear"}),
                 "unsupported_attribute", "cu_seqlens (ragged packing)")
