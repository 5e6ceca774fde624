"""com.microsoft Attention and MultiHeadAttention vs onnxruntime's CPU kernels: mask forms,
past/present, causal, qkv_hidden_sizes, scale, mask_filter_value, attention_bias, packed
QKV / KV, BNSH key/value, and malformed nodes (one-line ConversionError)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

import converter
from tests.op_mappings.onnx.contrib.attention_harness import MS, check_ms, conversion_error
from tests.op_mappings.onnx.harness import assert_close, node_model, rand, run_ort

B, S, D, N = 2, 5, 12, 3
X = rand(B, S, D, seed=1, low=-1, high=1)
W = rand(D, 3 * D, seed=2, low=-0.5, high=0.5)
BIAS = rand(3 * D, seed=3, low=-0.5, high=0.5)


def _attention(mask: np.ndarray | None = None, past: np.ndarray | None = None,
               attn_bias: np.ndarray | None = None, attrs: Mapping[str, Any] | None = None,
               w: np.ndarray = W, bias: np.ndarray | None = BIAS, const_mask: bool = False,
               present: bool = False) -> dict[str, float]:
    inputs = [("x", X), ("w", w), ("bias", bias), ("mask", mask), ("past", past),
              ("attn_bias", attn_bias)]
    while inputs[-1][1] is None:
        inputs.pop()
    consts = ["w", "bias"] + (["mask"] if const_mask else [])
    return check_ms("Attention", inputs, {"num_heads": N, **(attrs or {})},
                    outputs=("y", "present") if present else ("y",), constants=consts)


def test_attention_plain_and_without_bias() -> None:
    """onnxruntime 1.31 crashes on an Attention without bias: that form is checked against
    onnxruntime with a zero bias."""
    _attention()
    ours = node_model("Attention", [("x", X), ("w", W)], {"num_heads": N}, constants=("w",),
                      domain=MS)
    theirs = node_model("Attention", [("x", X), ("w", W), ("b", np.zeros(3 * D, np.float32))],
                        {"num_heads": N}, constants=("w", "b"), domain=MS)
    assert_close(converter.convert(ours).run({"x": X})["y"], run_ort(theirs, {"x": X})["y"],
                 1e-4, 1e-5, "Attention without bias")


@pytest.mark.parametrize("const_mask", [False, True])
@pytest.mark.parametrize("form", ["lengths", "ends_starts", "2d", "3d"])
def test_attention_mask_forms(form: str, const_mask: bool) -> None:
    rng = np.random.default_rng(4)
    if form == "lengths":
        mask = np.array([5, 3], np.int32)
    elif form == "ends_starts":
        mask = np.array([5, 4, 1, 0], np.int32)
    elif form == "2d":
        mask = (rng.random((B, S)) > 0.4).astype(np.int32)
        mask[:, 0] = 1
    else:
        mask = (rng.random((B, S, S)) > 0.4).astype(np.int32)
        mask[..., 0] = 1
    _attention(mask=mask, const_mask=const_mask)


@pytest.mark.parametrize("past_len", [0, 3])
@pytest.mark.parametrize("mask", [None, "2d"])
def test_attention_unidirectional_past_present(past_len: int, mask: str | None) -> None:
    head = D // N
    past = rand(2, B, N, past_len, head, seed=5)
    m = None
    if mask:
        m = np.ones((B, past_len + S), np.int32)
        m[1, :2] = 0
    _attention(mask=m, past=past, attrs={"unidirectional": 1}, present=True)


def test_attention_present_without_past_scale_filter_value() -> None:
    mask = np.array([4, 2], np.int32)
    _attention(mask=mask, attrs={"scale": 0.3, "mask_filter_value": -50.0}, present=True)


def test_attention_qkv_hidden_sizes() -> None:
    w = rand(D, 12 + 12 + 6, seed=6, low=-0.5, high=0.5)
    bias = rand(30, seed=7)
    _attention(w=w, bias=bias, attrs={"qkv_hidden_sizes": [12, 12, 6]})


@pytest.mark.parametrize("shape", [(1, N, S, S), (B, 1, S, S)])
def test_attention_bias_input(shape: tuple[int, ...]) -> None:
    _attention(attn_bias=rand(*shape, seed=8), mask=np.array([5, 4], np.int32))


def test_attention_4d_mask_numpy_reference() -> None:
    """onnxruntime's CPU kernel rejects the 4-D mask: check it against numpy."""
    max_len, past_len, head = 9, 2, D // N
    rng = np.random.default_rng(9)
    mask = (rng.random((B, 1, max_len, max_len)) > 0.3).astype(np.int32)
    mask[..., 0] = 1
    past = rand(2, B, N, past_len, head, seed=10)
    model = node_model("Attention", [("x", X), ("w", W), ("bias", BIAS), ("mask", mask),
                                     ("past", past)], {"num_heads": N},
                       outputs=("y", "present"), constants=("w", "bias"), domain=MS)
    got = converter.convert(model).run({"x": X, "mask": mask, "past": past})
    qkv = X @ W + BIAS
    q, k, v = (t.reshape(B, S, N, head).transpose(0, 2, 1, 3) for t in np.split(qkv, 3, -1))
    k = np.concatenate([past[0], k], 2)
    v = np.concatenate([past[1], v], 2)
    total = past_len + S
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(head)
    allowed = mask[:, :, past_len:past_len + S, :total] > 0
    scores = scores + np.where(allowed, 0.0, -10000.0)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    ref = (p @ v).transpose(0, 2, 1, 3).reshape(B, S, D)
    np.testing.assert_allclose(got["y"], ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["present"], np.stack([k, v]), rtol=1e-5, atol=1e-6)


def test_attention_malformed() -> None:
    text = conversion_error("Attention", [("x", X), ("w", W)], {"num_heads": 5})
    assert "not divisible by num_heads 5" in text
    text = conversion_error("Attention", [("x", X), ("w", W)],
                            {"num_heads": N, "qkv_hidden_sizes": [12, 12, 9]})
    assert "qkv_hidden_sizes" in text
    text = conversion_error("Attention", [("x", X)], {"num_heads": N})
    assert "expects 2 to 7 inputs, got 1" in text
    text = conversion_error("Attention", [("x", X), ("w", W)], {})
    assert "'num_heads' is missing" in text
    text = conversion_error("Attention", [("x", X), ("w", W), ("b", BIAS),
                                          ("m", np.ones((B, S + 1), np.int32))],
                            {"num_heads": N})
    assert "mask_index of shape [2, 6]" in text


# -- MultiHeadAttention ----------------------------------------------------------------------

L = 4
Q = rand(B, S, D, seed=11, low=-1, high=1)
K = rand(B, L, D, seed=12, low=-1, high=1)
V = rand(B, L, 6, seed=13, low=-1, high=1)


def _mha(inputs: dict[str, np.ndarray | None], attrs: Mapping[str, Any] | None = None,
         outputs: Sequence[str] = ("y",), constants: Sequence[str] = ()) -> dict[str, float]:
    order = ["q", "k", "v", "bias", "kpm", "attn_bias", "past_k", "past_v"]
    items = [(n, inputs.get(n)) for n in order]
    while items[-1][1] is None:
        items.pop()
    return check_ms("MultiHeadAttention", items, {"num_heads": N, **(attrs or {})},
                    outputs=outputs, constants=constants)


def test_mha_cross_attention_bias_and_masks() -> None:
    bias = rand(2 * D + 6, seed=14)
    _mha({"q": Q, "k": K, "v": V})
    _mha({"q": Q, "k": K, "v": V, "bias": bias}, constants=("bias",))
    _mha({"q": Q, "k": K, "v": V, "kpm": np.array([4, 2], np.int32)})
    kpm = np.array([[1, 1, 0, 1], [1, 0, 0, 0]], np.int32)
    _mha({"q": Q, "k": K, "v": V, "kpm": kpm, "attn_bias": rand(B, 1, S, L, seed=15)},
         attrs={"scale": 0.7, "mask_filter_value": -1000.0})
    kpm3 = (np.random.default_rng(16).random((B, S, L)) > 0.5).astype(np.int32)
    kpm3[..., 1] = 1
    _mha({"q": Q, "k": K, "v": V, "kpm": kpm3, "attn_bias": rand(1, N, S, L, seed=17)})


@pytest.mark.parametrize("past_len", [0, 3])
def test_mha_self_attention_past_present_causal(past_len: int) -> None:
    kv = rand(B, S, D, seed=18, low=-1, high=1)
    head = D // N
    past_k = rand(B, N, past_len, head, seed=19)
    past_v = rand(B, N, past_len, head, seed=20)
    kpm = np.ones((B, past_len + S), np.int32)
    kpm[0, -1] = 0
    _mha({"q": Q, "k": kv, "v": kv, "bias": rand(3 * D, seed=21), "kpm": kpm,
          "past_k": past_k, "past_v": past_v}, attrs={"unidirectional": 1},
         outputs=("y", "present_k", "present_v"))


def test_mha_decode_step() -> None:
    q1, k1 = Q[:, :1], K[:, :1]
    head = D // N
    _mha({"q": q1, "k": k1, "v": k1, "past_k": rand(B, N, 6, head, seed=22),
          "past_v": rand(B, N, 6, head, seed=23)}, attrs={"unidirectional": 1},
         outputs=("y", "present_k", "present_v"))


def test_mha_qk_output_numpy_reference() -> None:
    """onnxruntime 1.31 cannot load a MultiHeadAttention whose qk output is used (its type
    inference fails): the scores are checked against numpy."""
    head = D // N
    kpm = np.array([[1, 1, 0, 1], [1, 0, 1, 1]], np.int32)
    model = node_model("MultiHeadAttention", [("q", Q), ("k", K), ("v", K), ("b", None),
                                              ("kpm", kpm)],
                       {"num_heads": N, "scale": 0.5}, outputs=("y", "", "", "qk"), domain=MS)
    got = converter.convert(model).run({"q": Q, "k": K, "v": K, "kpm": kpm})
    q = Q.reshape(B, S, N, head).transpose(0, 2, 1, 3)
    k = K.reshape(B, L, N, head).transpose(0, 2, 1, 3)
    ref = 0.5 * q @ k.transpose(0, 1, 3, 2) + np.where(kpm > 0, 0, -10000.0)[:, None, None]
    np.testing.assert_allclose(got["qk"], ref, rtol=1e-5, atol=1e-5)


def check_vs_unpacked(packed: Sequence[tuple[str, np.ndarray | None]],
                      unpacked: Sequence[tuple[str, np.ndarray | None]],
                      attrs: Mapping[str, Any]) -> float:
    """Our conversion of a packed-input MultiHeadAttention (not implemented in onnxruntime's
    CPU kernel) against onnxruntime on the same data unpacked; the max abs error."""
    ours = node_model("MultiHeadAttention", packed, attrs, domain=MS)
    theirs = node_model("MultiHeadAttention", unpacked, attrs, domain=MS)
    got = converter.convert(ours).run({n: v for n, v in packed if v is not None})["y"]
    expected = run_ort(theirs, {n: v for n, v in unpacked if v is not None})["y"]
    assert_close(got, expected, 1e-4, 1e-5, "packed MultiHeadAttention")
    return float(np.max(np.abs(got - expected)))


@pytest.mark.parametrize("attrs", [{}, {"unidirectional": 1, "scale": 0.4}])
def test_mha_packed_qkv_and_packed_kv(attrs: dict[str, Any]) -> None:
    head = D // N
    packed = rand(B, S, N, 3, head, seed=24)
    q, k, v = (packed[:, :, :, i].reshape(B, S, D) for i in range(3))
    kpm = np.array([5, 3], np.int32)
    attrs = {"num_heads": N, **attrs}
    check_vs_unpacked([("q", packed), ("k", None), ("v", None), ("b", None), ("m", kpm)],
                      [("q", q), ("k", k), ("v", v), ("b", None), ("m", kpm)], attrs)
    packed_kv = rand(B, L, N, 2, head, seed=25)
    k, v = (packed_kv[:, :, :, i].reshape(B, L, D) for i in range(2))
    check_vs_unpacked([("q", Q), ("k", packed_kv)], [("q", Q), ("k", k), ("v", v)], attrs)


def test_mha_malformed() -> None:
    text = conversion_error("MultiHeadAttention", [("q", Q), ("k", K), ("v", V)],
                            {"num_heads": 5})
    assert "not divisible by num_heads 5" in text
    text = conversion_error("MultiHeadAttention", [("q", Q), ("k", K)], {"num_heads": N})
    assert "value is required" in text
    text = conversion_error("MultiHeadAttention",
                            [("q", Q), ("k", K), ("v", V), ("b", rand(7))], {"num_heads": N})
    assert "bias of shape [7]" in text
    text = conversion_error("MultiHeadAttention", [("q", Q), ("k", K), ("v", V)],
                            {"num_heads": N, "unidirectional": 2})
    assert "'unidirectional' must be 0 or 1" in text
