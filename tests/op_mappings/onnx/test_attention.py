"""ONNX Attention (23, 24; 25 vs the ONNX reference evaluator) vs onnxruntime: 3-D and 4-D inputs, grouped KV heads, bool and
float masks (broadcast, shorter than the key length), past/present, bottom-right causal,
nonpad_kv_seqlen, scale, softcap, softmax_precision, qk_matmul_output modes 0 and 3,
float16, malformed nodes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx.reference import ReferenceEvaluator

import converter
from tests.op_mappings.onnx.contrib.attention_harness import check_ms, conversion_error
from tests.op_mappings.onnx.harness import assert_close, rand, run_ort
from tests.op_mappings.onnx.harness_ext import node_model

B, S, L, H = 2, 4, 5, 8


def _attn(q: np.ndarray, k: np.ndarray, v: np.ndarray, attrs: dict[str, Any], *,
          mask: np.ndarray | None = None, past: tuple[np.ndarray, np.ndarray] | None = None,
          nonpad: np.ndarray | None = None, outputs: tuple[str, ...] = ("y",),
          opset: int = 23, constants: tuple[str, ...] = (), tol: float = 1e-4
          ) -> dict[str, float]:
    items: list[tuple[str, np.ndarray | None]] = [("q", q), ("k", k), ("v", v),
                                                  ("mask", mask)]
    items += [("pk", past[0]), ("pv", past[1])] if past else [("pk", None), ("pv", None)]
    items.append(("nonpad", nonpad))
    while items[-1][1] is None:
        items.pop()
    return check_ms("Attention", items, attrs, outputs=outputs, constants=constants,
                    domain="", opset=opset, rtol=tol, atol=tol)


def _qkv(qn: int, kvn: int, rank: int, seed: int = 0, v_size: int = H
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if rank == 3:
        return (rand(B, S, qn * H, seed=seed + 1), rand(B, L, kvn * H, seed=seed + 2),
                rand(B, L, kvn * v_size, seed=seed + 3))
    return (rand(B, qn, S, H, seed=seed + 1), rand(B, kvn, L, H, seed=seed + 2),
            rand(B, kvn, L, v_size, seed=seed + 3))


@pytest.mark.parametrize("opset", [23, 24])
@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("heads", [(2, 2), (4, 2)])
def test_attention_plain_and_grouped(opset: int, rank: int, heads: tuple[int, int]) -> None:
    q, k, v = _qkv(*heads, rank, v_size=6)
    attrs = {"q_num_heads": heads[0], "kv_num_heads": heads[1]} if rank == 3 else {}
    _attn(q, k, v, attrs, opset=opset)
    _attn(q, k, v, {**attrs, "scale": 0.3, "softcap": 1.5}, opset=opset)


@pytest.mark.parametrize("kind", ["bool", "float"])
@pytest.mark.parametrize("shape", [(S, L), (B, 1, S, L), (1, 4, S, L), (4, S, L)])
@pytest.mark.parametrize("const", [False, True])
def test_attention_masks(kind: str, shape: tuple[int, ...], const: bool) -> None:
    q, k, v = _qkv(4, 2, 4)
    rng = np.random.default_rng(5)
    if kind == "bool":
        mask = rng.random(shape) > 0.3
        mask[..., 0] = True
    else:
        mask = rand(*shape, seed=6)
    _attn(q, k, v, {}, mask=mask, constants=("mask",) if const else ())


def test_attention_short_mask_vs_padded() -> None:
    """A mask shorter than the key length is padded with False / -inf (onnxruntime 1.31
    rejects it: checked against onnxruntime on the padded mask)."""
    q, k, v = _qkv(4, 2, 4)
    rng = np.random.default_rng(15)
    short = rng.random((B, 4, S, 3)) > 0.3
    short[..., 0] = True
    for mask, padded in ((short, np.pad(short, [(0, 0)] * 3 + [(0, 2)])),
                         (rand(S, 3, seed=16), np.pad(rand(S, 3, seed=16), [(0, 0), (0, 2)],
                                                      constant_values=-np.inf))):
        ours = node_model("Attention", [("q", q), ("k", k), ("v", v), ("m", mask)], {},
                          opset=23)
        theirs = node_model("Attention", [("q", q), ("k", k), ("v", v), ("m", padded)], {},
                            opset=23)
        got = converter.convert(ours).run({"q": q, "k": k, "v": v, "m": mask})["y"]
        expected = run_ort(theirs, {"q": q, "k": k, "v": v, "m": padded})["y"]
        assert_close(got, expected, 1e-4, 1e-5, "Attention with a short mask")


@pytest.mark.parametrize("past_len", [0, 3])
@pytest.mark.parametrize("causal", [0, 1])
def test_attention_past_present_causal(past_len: int, causal: int) -> None:
    q, k, v = _qkv(4, 2, 4)
    past = (rand(B, 2, past_len, H, seed=7), rand(B, 2, past_len, H, seed=8))
    mask = np.ones((B, 1, S, past_len + L), bool)
    mask[1, :, :, 0] = False  # with causal and no past: row 0 of batch 1 sees no key (0)
    _attn(q, k, v, {"is_causal": causal}, past=past, mask=mask,
          outputs=("y", "present_k", "present_v"))


def test_attention_decode_step_3d() -> None:
    q, k, v = rand(B, 1, 4 * H, seed=9), rand(B, 1, 2 * H, seed=10), rand(B, 1, 2 * H, seed=11)
    past = (rand(B, 2, 6, H, seed=12), rand(B, 2, 6, H, seed=13))
    _attn(q, k, v, {"q_num_heads": 4, "kv_num_heads": 2, "is_causal": 1}, past=past,
          outputs=("y", "present_k", "present_v"))


@pytest.mark.parametrize("causal", [0, 1])
@pytest.mark.parametrize("const", [False, True])
def test_attention_nonpad_kv_seqlen(causal: int, const: bool) -> None:
    q, k, v = _qkv(2, 2, 4)
    nonpad = np.array([5, 4], np.int64)
    _attn(q, k, v, {"is_causal": causal}, nonpad=nonpad, opset=24,
          constants=("nonpad",) if const else ())


@pytest.mark.parametrize("mode", [0, 3])
def test_attention_qk_output(mode: int) -> None:
    q, k, v = _qkv(4, 2, 4)
    _attn(q, k, v, {"qk_matmul_output_mode": mode, "softcap": 2.0, "is_causal": 1},
          mask=rand(S, L, seed=14), outputs=("y", "", "", "qk"))


def test_attention_float16_and_softmax_precision() -> None:
    """float16 is computed in float32 here; onnxruntime's float16 kernel is off the float64
    result by up to 2.4e-3 on these inputs (ours by 1e-3), hence the tolerance."""
    q, k, v = (t.astype(np.float16) for t in _qkv(4, 2, 4))
    _attn(q, k, v, {}, tol=4e-3)
    _attn(q, k, v, {"softmax_precision": 1, "is_causal": 1}, tol=4e-3)


def test_attention_malformed() -> None:
    q, k, v = _qkv(4, 2, 3)
    text = conversion_error("Attention", [("q", q), ("k", k), ("v", v)], {"q_num_heads": 4},
                            domain="", opset=23)
    assert "need positive q_num_heads and kv_num_heads" in text
    text = conversion_error("Attention", [("q", q), ("k", k), ("v", v)],
                            {"q_num_heads": 4, "kv_num_heads": 3}, domain="", opset=23)
    assert "does not split into 3 heads" in text
    q4, k4, v4 = _qkv(3, 2, 4)
    text = conversion_error("Attention", [("q", q4), ("k", k4), ("v", v4)], {},
                            domain="", opset=23)
    assert "q_num_heads 3 is not a multiple of kv_num_heads 2" in text
    q4, k4, v4 = _qkv(4, 2, 4)
    text = conversion_error("Attention", [("q", q4), ("k", k4), ("v", v4),
                                          ("m", rand(3, S, L))], {}, domain="", opset=23)
    assert "attn_mask of shape [3, 4, 5] does not broadcast" in text
    text = conversion_error("Attention", [("q", q4), ("k", k4), ("v", v4)],
                            {"qk_matmul_output_mode": 1}, outputs=("y", "", "", "qk"),
                            domain="", opset=23)
    assert "qk_matmul_output_mode 1 is not supported" in text


@pytest.mark.parametrize("window", [(1, -1), (2, 1), (-1, 0)])
@pytest.mark.parametrize("causal", [0, 1])
@pytest.mark.parametrize("past_len", [0, 2])
def test_attention_25_sliding_window_onnx_reference(window: tuple[int, int], causal: int,
                                                    past_len: int) -> None:
    """Opset 25 left/right windows; onnxruntime 1.31 has no Attention-25, so the oracle is
    the ONNX reference evaluator."""
    q, k, v = _qkv(4, 2, 4)
    items = [("q", q), ("k", k), ("v", v), ("m", None),
             ("pk", rand(B, 2, past_len, H, seed=20)), ("pv", rand(B, 2, past_len, H, seed=21))]
    attrs = {"is_causal": causal, "left_window_size": window[0],
             "right_window_size": window[1]}
    model = node_model("Attention", items, attrs, opset=25, outputs=("y", "pk_out", "pv_out"))
    feeds = {n: a for n, a in items if a is not None}
    expected = ReferenceEvaluator(model).run(None, feeds)
    got = converter.convert(model).run(feeds)
    for (name, value), ref in zip(got.items(), expected, strict=True):
        assert_close(value, ref, 1e-4, 1e-5, f"Attention-25 {name}")
