"""com.microsoft DecoderMaskedSelfAttention (CUDA only) vs onnxruntime running its definition:
MatMul + Add + Split (its CPU kernel takes no bias nor packed QKV here), the [2, B, N, M, H]
buffer split, DecoderMaskedMultiHeadAttention (CPU kernel) and the present halves stacked
again."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper

from tests.op_mappings.onnx.contrib.oracle import check_ms, expect_error, ms_model, rng_array

B, N, H, M = 2, 3, 4, 7
D = N * H
ATTRS = {"num_heads": N, "past_present_share_buffer": 1}


def _reference(attrs: dict[str, Any]) -> Any:
    def build(ins: list[str], outs: list[str]) -> list[Any]:
        x, w, bias, mask, past, ab, psl = (ins + [""] * 7)[:7]
        const = helper.make_node("Constant", [], ["ax0"], value=helper.make_tensor(
            "ax0", TensorProto.INT64, [1], [0]))
        nodes = [const, helper.make_node("MatMul", [x, w], ["xw"]),
                 helper.make_node("Add", ["xw", bias], ["qkv"]),
                 helper.make_node("Split", ["qkv"], ["q", "k", "v"], axis=2, num_outputs=3),
                 helper.make_node("Split", [past], ["pk5", "pv5"], axis=0, num_outputs=2),
                 helper.make_node("Squeeze", ["pk5", "ax0"], ["pk"]),
                 helper.make_node("Squeeze", ["pv5", "ax0"], ["pv"]),
                 helper.make_node("DecoderMaskedMultiHeadAttention",
                                  ["q", "k", "v", mask, ab, "pk", "pv", psl],
                                  [outs[0], "ok", "ov"], domain="com.microsoft", **attrs),
                 helper.make_node("Unsqueeze", ["ok", "ax0"], ["ok5"]),
                 helper.make_node("Unsqueeze", ["ov", "ax0"], ["ov5"]),
                 helper.make_node("Concat", ["ok5", "ov5"], [outs[1]], axis=0)]
        return nodes
    return build


@pytest.mark.parametrize("p", [0, 3, M - 1])
@pytest.mark.parametrize("mask,attn_bias", [(False, False), (True, True)])
def test_decoder_masked_self_attention(p: int, mask: bool, attn_bias: bool) -> None:
    m = None
    if mask:
        m = np.ones((B, p + 1), np.int32)
        m[1, 0] = 0
    items: list[tuple[str, np.ndarray | None]] = [
        ("x", rng_array(B, 1, D, seed=1, low=-1, high=1)),
        ("w", rng_array(D, 3 * D, seed=2, low=-0.5, high=0.5)),
        ("bias", rng_array(3 * D, seed=3, low=-0.2, high=0.2)), ("mask", m),
        ("past", rng_array(2, B, N, M, H, seed=4)),
        ("ab", rng_array(1, N, 1, p + 1, seed=5) if attn_bias else None),
        ("psl", np.array(p, np.int32))]
    check_ms("DecoderMaskedSelfAttention", items, ATTRS, outputs=("y", "present"),
             constants=("w", "bias", "psl"), reference=_reference(ATTRS), rtol=1e-4,
             atol=1e-5)


def test_malformed_nodes() -> None:
    items = [("x", rng_array(B, 2, D)), ("w", rng_array(D, 3 * D)), ("bias", rng_array(3 * D)),
             ("mask", None), ("past", rng_array(2, B, N, M, H)), ("ab", None),
             ("psl", np.array(0, np.int32))]
    expect_error(ms_model("DecoderMaskedSelfAttention", items, ATTRS,
                          outputs=("y", "present"), constants=("psl",)),
                 "invalid_model", "must be [B, 1, D_in] and [D_in, 3·D]")
