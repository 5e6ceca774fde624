"""com.microsoft DecoderMaskedMultiHeadAttention vs onnxruntime: self-attention over a shared
KV buffer (past_sequence_length constant or graph input), mask_index, attention_bias, bias,
packed QKV, the qk output, beam_width 1 with cache_indirection, cross-attention, and
malformed nodes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import converter
from tests.op_mappings.onnx.contrib.attention_harness import MS, check_ms, conversion_error
from tests.op_mappings.onnx.harness import assert_close, node_model, rand, run_ort

B, N, H, M = 2, 3, 4, 7
D = N * H
SHARE = {"num_heads": N, "past_present_share_buffer": 1}


def _self(p: int, *, mask: bool = False, attn_bias: bool = False, bias: bool = False,
          const_p: bool = True, beams: bool = False,
          attrs: dict[str, Any] | None = None) -> dict[str, float]:
    q, k, v = (rand(B, 1, D, seed=s, low=-1, high=1) for s in (1, 2, 3))
    items: list[tuple[str, np.ndarray | None]] = [("q", q), ("k", k), ("v", v)]
    m = None
    if mask:
        m = np.ones((B, p + 1), np.int32)
        m[1, 0] = 0
    items += [("mask", m), ("ab", rand(1, N, 1, p + 1, seed=4) if attn_bias else None),
              ("pk", rand(B, N, M, H, seed=5)), ("pv", rand(B, N, M, H, seed=6)),
              ("p", np.array(p, np.int32))]
    if beams or bias:
        items += [("bw", np.array(1, np.int32) if beams else None),
                  ("ci", np.zeros((B, 1, M), np.int32) if beams else None),
                  ("bias", rand(3 * D, seed=7) if bias else None)]
    consts = (["p"] if const_p else []) + (["bw"] if beams else [])
    return check_ms("DecoderMaskedMultiHeadAttention", items, {**SHARE, **(attrs or {})},
                    outputs=("y", "pk_out", "pv_out"), constants=consts)


@pytest.mark.parametrize("p", [0, 3, M - 1])
def test_dmmha_self_constant_past_length(p: int) -> None:
    _self(p)
    _self(p, mask=True, attn_bias=True, bias=True, attrs={"scale": 0.3})


@pytest.mark.parametrize("p", [0, 4])
def test_dmmha_self_graph_past_length(p: int) -> None:
    _self(p, const_p=False)
    _self(p, const_p=False, bias=True, attrs={"scale": 0.4})


@pytest.mark.parametrize("const_p", [True, False])
def test_dmmha_packed_qkv_vs_unpacked(const_p: bool) -> None:
    """onnxruntime 1.31's CPU kernel fails on packed QKV: our packed conversion is checked
    against onnxruntime on the unpacked inputs."""
    q, k, v = (rand(B, 1, D, seed=s, low=-1, high=1) for s in (1, 2, 3))
    tail = [("m", None), ("ab", None), ("pk", rand(B, N, M, H, seed=5)),
            ("pv", rand(B, N, M, H, seed=6)), ("p", np.array(3, np.int32))]
    consts = ["p"] if const_p else []
    ours = node_model("DecoderMaskedMultiHeadAttention",
                      [("qkv", np.concatenate([q, k, v], -1)), ("k", None), ("v", None)] + tail,
                      SHARE, outputs=("y", "pk_out", "pv_out"), constants=consts, domain=MS)
    theirs = node_model("DecoderMaskedMultiHeadAttention", [("q", q), ("k", k), ("v", v)] + tail,
                        SHARE, outputs=("y", "pk_out", "pv_out"), constants=consts, domain=MS)
    feeds = {n: a for n, a in tail if a is not None and n not in consts}
    got = converter.convert(ours).run({"qkv": np.concatenate([q, k, v], -1), **feeds})
    expected = run_ort(theirs, {"q": q, "k": k, "v": v, **feeds})
    for name in got:
        assert_close(got[name], expected[name], 1e-4, 1e-5, name)


def test_dmmha_beams() -> None:
    _self(3, beams=True, mask=True)


def test_dmmha_qk_output_numpy_reference() -> None:
    """onnxruntime 1.31 cannot load the node with its qk output used (type inference
    fails): the scores are checked against numpy."""
    p = 2
    q, k, v = (rand(B, 1, D, seed=s, low=-1, high=1) for s in (1, 2, 3))
    pk, pv = rand(B, N, M, H, seed=5), rand(B, N, M, H, seed=6)
    mask = np.array([[1, 0, 1], [1, 1, 1]], np.int32)
    ab = rand(1, N, 1, p + 1, seed=4)
    model = node_model("DecoderMaskedMultiHeadAttention",
                       [("q", q), ("k", k), ("v", v), ("m", mask), ("ab", ab), ("pk", pk),
                        ("pv", pv), ("p", np.array(p, np.int32))],
                       {**SHARE, "output_qk": 1}, outputs=("y", "", "", "qk"),
                       constants=["p"], domain=MS)
    got = converter.convert(model).run({"q": q, "k": k, "v": v, "m": mask, "ab": ab,
                                        "pk": pk, "pv": pv})
    qh = q.reshape(B, N, 1, H)
    keys = np.concatenate([pk[:, :, :p], k.reshape(B, 1, N, H).transpose(0, 2, 1, 3)], 2)
    ref = (qh @ keys.transpose(0, 1, 3, 2)) / np.sqrt(H) + ab
    ref = ref + np.where(mask > 0, 0.0, -10000.0)[:, None, None]
    np.testing.assert_allclose(got["qk"], ref, rtol=1e-5, atol=1e-4)


def test_dmmha_cross_attention() -> None:
    q = rand(B, 1, D, seed=8)
    k, v = rand(B, N, 5, H, seed=9), rand(B, N, 5, H, seed=10)
    mask = np.array([[1, 1, 1, 0, 1], [1, 0, 1, 1, 1]], np.int32)
    check_ms("DecoderMaskedMultiHeadAttention", [("q", q), ("k", k), ("v", v), ("m", mask)],
             {"num_heads": N})
    check_ms("DecoderMaskedMultiHeadAttention",
             [("q", q), ("k", k), ("v", v)] + [(f"_{i}", None) for i in range(7)]
             + [("bias", rand(3 * D, seed=11))], {"num_heads": N, "scale": 0.7})


def test_dmmha_malformed() -> None:
    q = rand(B, 1, D)
    buf = rand(B, N, M, H)
    base = [("q", q), ("k", q), ("v", q), ("m", None), ("ab", None), ("pk", buf),
            ("pv", buf), ("p", np.array(2, np.int32))]
    text = conversion_error("DecoderMaskedMultiHeadAttention", base, {"num_heads": N})
    assert "needs past_present_share_buffer=1" in text
    text = conversion_error("DecoderMaskedMultiHeadAttention", base, {**SHARE, "num_heads": 5})
    assert "divisible by num_heads 5" in text
    text = conversion_error("DecoderMaskedMultiHeadAttention",
                            base + [("bw", np.array(2, np.int32))], SHARE, constants=["bw"])
    assert "beam_width [2] is not supported" in text
    text = conversion_error("DecoderMaskedMultiHeadAttention",
                            base[:3] + [("m", np.ones((B, 2), np.int32))] + base[4:], SHARE,
                            constants=["p"])
    assert "mask_index of shape [2, 2] must be [batch, total_sequence_length] = [2, 3]" in text
