"""The onnxruntime backend's GroupQueryAttention re-fusion
(converter/runtimes/onnxruntime/lowering/group_query_attention.py): a com.microsoft GroupQueryAttention
node is converted (the importer decomposes it), the WebNN graph is lowered with and without
`contrib_ops`, both lowerings run in onnxruntime and are compared with a float64 numpy oracle
written from onnxruntime's documented semantics (decode / chunked prefill over a past buffer,
seqlens_k a graph input, rotary); the fused lowering holds one GroupQueryAttention node and
none of the decomposition. Forms the fusion must leave alone (first prompt, local window,
softcap, constant seqlens_k) keep their decomposition. The standard export never emits
com.microsoft ops."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import converter
from converter.core.webnn.context import MLGraph
from converter.runtimes.onnxruntime.to_onnx import to_onnx
from converter.validate import compile_graph
from tests.converter.io.export.onnx_run import op_counts, run_onnx
from tests.op_mappings.onnx.harness import node_model

N, NK = 4, 2
RNG = np.random.default_rng(11)


def _rotate(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, interleaved: bool) -> np.ndarray:
    """x [S, H] rotated with per-row cos/sin [S, R/2] (the first R elements)."""
    out = x.copy()
    half = cos.shape[1]
    if interleaved:
        a, b = x[:, 0:2 * half:2], x[:, 1:2 * half:2]
        out[:, 0:2 * half:2], out[:, 1:2 * half:2] = a * cos - b * sin, b * cos + a * sin
    else:
        a, b = x[:, :half], x[:, half:2 * half]
        out[:, :half], out[:, half:2 * half] = a * cos - b * sin, b * cos + a * sin
    return out


def _oracle(q: np.ndarray, k: np.ndarray, v: np.ndarray, past_k: np.ndarray,
            past_v: np.ndarray, seqlens: np.ndarray, total: int, scale: float,
            rotary: tuple[np.ndarray, np.ndarray, bool] | None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """float64 GroupQueryAttention with a past (not a first prompt): batch row b keeps
    seqlens[b] + 1 − S past rows, appends its S new rows (at positions past + i, rotated
    there), and query row i attends causally to keys 0..past + i. Returns (output [B, S,
    N·H], present key, present value [B, Nk, total, H]); present rows beyond seqlens[b] are
    zero."""
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    bsz, seq, _ = q.shape
    size = past_k.shape[3]
    out = np.zeros((bsz, seq, N * size))
    pk, pv = np.zeros((bsz, NK, total, size)), np.zeros((bsz, NK, total, size))
    for b in range(bsz):
        kept = int(seqlens[b]) + 1 - seq
        qh = q[b].reshape(seq, N, size).transpose(1, 0, 2)
        kh = k[b].reshape(seq, NK, size).transpose(1, 0, 2)
        vh = v[b].reshape(seq, NK, size).transpose(1, 0, 2)
        if rotary is not None:
            cos, sin, interleaved = rotary
            rows = np.arange(kept, kept + seq)
            qh = np.stack([_rotate(h, cos[rows], sin[rows], interleaved) for h in qh])
            kh = np.stack([_rotate(h, cos[rows], sin[rows], interleaved) for h in kh])
        pk[b, :, :kept], pv[b, :, :kept] = past_k[b, :, :kept], past_v[b, :, :kept]
        pk[b, :, kept:kept + seq], pv[b, :, kept:kept + seq] = kh, vh
        for n in range(N):
            kv = n // (N // NK)
            scores = qh[n] @ pk[b, kv].T * scale
            allowed = np.arange(total)[None, :] <= (kept + np.arange(seq))[:, None]
            scores = np.where(allowed, scores, -np.inf)
            p = np.exp(scores - scores.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            out[b, :, n * size:(n + 1) * size] = p @ pv[b, kv]
    return out, pk, pv


def _case(*, bsz: int = 1, seq: int = 3, total: int = 7, buffer: int = 4, size: int = 16,
          seqlens: list[int] | None = None, packed: bool = True, rotary_half: int = 0,
          interleaved: bool = False, attrs: dict[str, Any] | None = None,
          const_seqlens: bool = False) -> tuple[MLGraph, dict[str, np.ndarray],
                                                tuple[np.ndarray, ...]]:
    """(converted WebNN graph, feeds, oracle outputs) of one GroupQueryAttention node."""
    seqlens = seqlens or [total - 1] * bsz
    q = RNG.uniform(-1, 1, (bsz, seq, N * size)).astype(np.float32)
    k = RNG.uniform(-1, 1, (bsz, seq, NK * size)).astype(np.float32)
    v = RNG.uniform(-1, 1, (bsz, seq, NK * size)).astype(np.float32)
    past_k = RNG.uniform(-1, 1, (bsz, NK, buffer, size)).astype(np.float32)
    past_v = RNG.uniform(-1, 1, (bsz, NK, buffer, size)).astype(np.float32)
    lens = np.array(seqlens, np.int32)
    inputs: list[tuple[str, np.ndarray | None]] = (
        [("qkv", np.concatenate([q, k, v], -1)), ("k", None), ("v", None)] if packed
        else [("q", q), ("k", k), ("v", v)])
    inputs += [("past_k", past_k), ("past_v", past_v), ("seqlens", lens),
               ("total", np.array(total, np.int32))]
    rotary = None
    if rotary_half:
        angles = RNG.uniform(0, 6, (32, rotary_half))
        cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
        inputs += [("cos", cos), ("sin", sin)]
        rotary = (cos.astype(np.float64), sin.astype(np.float64), interleaved)
    all_attrs = {"num_heads": N, "kv_num_heads": NK, "do_rotary": int(bool(rotary_half)),
                 "rotary_interleaved": int(interleaved), **(attrs or {})}
    consts = ["total", "cos", "sin"] + (["seqlens"] if const_seqlens else [])
    model = node_model("GroupQueryAttention", inputs, all_attrs,
                       outputs=("y", "present_k", "present_v"), constants=consts,
                       domain="com.microsoft", opset=17)
    feeds = {n: a for n, a in inputs if a is not None and n not in consts}
    scale = float(all_attrs.get("scale", 1 / math.sqrt(size)))
    want = _oracle(q, k, v, past_k, past_v, lens, total, scale, rotary)
    graph = converter.convert(model, target="spec").graph
    return graph, feeds, want


@pytest.mark.parametrize("form", [
    {},  # chunked prefill (3 new tokens after 4), packed QKV, no rotary
    {"rotary_half": 8},
    {"rotary_half": 8, "interleaved": True, "packed": False},
    {"rotary_half": 8, "size": 32},  # partial rotation
    {"bsz": 2, "seq": 1, "total": 6, "buffer": 5, "seqlens": [5, 3], "rotary_half": 8},
    {"bsz": 2, "seq": 1, "total": 6, "buffer": 6, "seqlens": [5, 2], "packed": False},
    {"attrs": {"scale": 0.4}, "rotary_half": 8},
], ids=["chunk", "rotary", "interleaved_separate", "partial", "decode_ragged",
        "decode_full_buffer", "scale"])
def test_gqa_is_fused_and_matches_the_oracle(form: dict[str, Any]) -> None:
    graph, feeds, want = _case(**form)
    fused, plain = to_onnx(graph, contrib_ops=True), to_onnx(graph)
    ops = op_counts(fused)
    assert ops["GroupQueryAttention"] == 1, ops
    assert not {"Softmax", "MatMul", "Where", "Pad"} & set(ops), ops
    assert "GroupQueryAttention" not in op_counts(plain)
    assert all(n.domain in ("", "ai.onnx") for n in plain.graph.node)
    assert [o.domain for o in plain.opset_import] == [""]
    for model in (fused, plain):
        got = run_onnx(model, feeds)
        for g, w, name in zip(got, want, ("output", "present key", "present value"),
                              strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("form", [
    {"seq": 4, "total": 4, "buffer": 4, "seqlens": [3]},  # a first prompt
    {"attrs": {"local_window_size": 2}},
    {"attrs": {"softcap": 2.0}},
    {"const_seqlens": True},
    {"rotary_half": 4},  # onnxruntime needs a cos_cache width that is a multiple of 8
], ids=["first_prompt", "local_window", "softcap", "constant_seqlens", "rotary_width_4"])
def test_gqa_forms_left_decomposed(form: dict[str, Any]) -> None:
    graph, _, _ = _case(**form)
    assert "GroupQueryAttention" not in op_counts(to_onnx(graph, contrib_ops=True))


def test_backend_runs_the_fused_node() -> None:
    """The onnxruntime backend lowers with contrib_ops: same results as the oracle."""
    graph, feeds, want = _case(rotary_half=8)
    got = compile_graph(graph, "onnxruntime").run(feeds)
    for g, w in zip(got.values(), want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


ZOO_ROW = "transformers_llama_genai_fp32"


@pytest.mark.slow
def test_gqa_fires_on_the_genai_llama(tmp_path: Path) -> None:
    """The zoo's genai-builder Llama (2 layers): both attentions fused; onnxruntime's
    optimized graph of the lowering has about as many nodes as that of the original."""
    from converter.zoo import load_model, read_manifests
    from converter.zoo.manifest import materialize

    root = Path(__file__).resolve().parents[4]
    (entry,) = [e for e in read_manifests([root / "models" / "zoo_transformers.toml"],
                                          generate=False) if e.name == ZOO_ROW]
    entry = materialize(entry)
    if entry.path is None:
        pytest.skip(entry.missing)
    result = converter.convert(load_model(entry), input_shapes=dict(entry.input_shapes),
                               target="spec")
    fused = to_onnx(result.graph, contrib_ops=True)
    assert op_counts(fused)["GroupQueryAttention"] == 2
    assert len(fused.graph.node) < 70, op_counts(fused)  # 194 nodes without the fusion
