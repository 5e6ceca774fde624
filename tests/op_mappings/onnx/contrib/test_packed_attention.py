"""com.microsoft PackedAttention and PackedMultiHeadAttention (CUDA only) vs onnxruntime's CPU
Attention / MultiHeadAttention on the padded batch with a key padding mask, at the real
tokens."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.op_mappings.onnx.contrib.oracle import compare, expect_error, ms_model, rng_array
from tests.op_mappings.onnx.harness import run_ort

N, H, S = 2, 4, 5
D = N * H
LENGTHS = [2, 5, 3]


def _packing(lengths: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(padded positions of the real tokens, token_offset, cumulative lengths)."""
    real = [b * S + s for b, n in enumerate(lengths) for s in range(n)]
    pads = [b * S + s for b, n in enumerate(lengths) for s in range(n, S)]
    cum = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    return np.array(real), np.array(real + pads, np.int32), cum


def _padded(packed: np.ndarray, real: np.ndarray, bsz: int) -> np.ndarray:
    out = np.zeros((bsz * S, *packed.shape[1:]), packed.dtype)
    out[real] = packed
    return out.reshape(bsz, S, *packed.shape[1:])


def _mask(lengths: list[int]) -> np.ndarray:
    return (np.arange(S)[None, :] < np.array(lengths)[:, None]).astype(np.int32)


@pytest.mark.parametrize("lengths", [LENGTHS, [5, 5], [1]])
@pytest.mark.parametrize("scale", [None, 0.3])
def test_packed_attention(lengths: list[int], scale: float | None) -> None:
    real, offset, cum = _packing(lengths)
    t, bsz = len(real), len(lengths)
    x = rng_array(t, 6, seed=1)
    w, bias = rng_array(6, 3 * D, seed=2, low=-0.5, high=0.5), rng_array(3 * D, seed=3)
    attrs: dict[str, Any] = {"num_heads": N} | ({} if scale is None else {"scale": scale})
    padded = _padded(x, real, bsz)
    oracle = ms_model("Attention", [("x", padded), ("w", w), ("b", bias),
                                    ("m", _mask(lengths))], attrs, constants=("w", "b"))
    want = run_ort(oracle, {"x": padded, "m": _mask(lengths)})["y"].reshape(bsz * S, D)[real]
    model = ms_model("PackedAttention", [("x", x), ("w", w), ("b", bias), ("off", offset),
                                         ("cum", cum)], attrs, constants=("w", "b"))
    compare(model, {"x": x, "off": offset, "cum": cum}, {"y": want}, "PackedAttention",
            1e-4, 1e-5)


@pytest.mark.parametrize("packed_qkv", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_packed_multi_head_attention(packed_qkv: bool, bias: bool) -> None:
    real, offset, cum = _packing(LENGTHS)
    t, bsz = len(real), len(LENGTHS)
    q, k, v = (rng_array(t, D, seed=s) for s in (4, 5, 6))
    bb = rng_array(3 * D, seed=7) if bias else None
    mha_items = [(n, _padded(a, real, bsz)) for n, a in (("q", q), ("k", k), ("v", v))]
    mha_items += [("b", bb), ("m", _mask(LENGTHS))]
    oracle = ms_model("MultiHeadAttention", mha_items, {"num_heads": N}, constants=("b",))
    feeds = {n: a for n, a in mha_items if a is not None and n != "b"}
    want = run_ort(oracle, feeds)["y"].reshape(bsz * S, D)[real]
    if packed_qkv:
        qkv = np.stack([a.reshape(t, N, H) for a in (q, k, v)], axis=2)  # [T, N, 3, H]
        items: list[tuple[str, np.ndarray | None]] = [("q", qkv), ("k", None), ("v", None)]
    else:
        items = [("q", q), ("k", k), ("v", v)]
    items += [("b", bb), ("off", offset), ("cum", cum)]
    model = ms_model("PackedMultiHeadAttention", items, {"num_heads": N}, constants=("b",))
    compare(model, {n: a for n, a in items if a is not None and n != "b"}, {"y": want},
            "PackedMultiHeadAttention", 1e-4, 1e-5)


def test_malformed_nodes() -> None:
    real, offset, cum = _packing(LENGTHS)
    items = [("q", rng_array(len(real), D)), ("k", rng_array(len(real), D)),
             ("v", rng_array(len(real), D)), ("b", None), ("off", offset), ("cum", cum),
             ("ab", rng_array(1, N, S, S))]
    expect_error(ms_model("PackedMultiHeadAttention", items, {"num_heads": N}),
                 "unsupported_attribute", "attention_bias is not supported")


@pytest.mark.parametrize("lengths", [LENGTHS, [5, 5], [1, 0, 4]])
def test_restore_padding(lengths: list[int]) -> None:
    real, offset, _ = _packing(lengths)
    x = rng_array(len(real), 6, seed=8)
    want = _padded(x, real, len(lengths))
    compare(ms_model("RestorePadding", [("x", x), ("off", offset.reshape(len(lengths), S))]),
            {"x": x, "off": offset.reshape(len(lengths), S)}, {"y": want}, "RestorePadding",
            0, 0)
