"""com.microsoft MatMulNBitsMlp and MatMulNBitsQkv (no CPU kernel) vs onnxruntime running the
ops they fuse: SimplifiedLayerNormalization / SkipSimplifiedLayerNormalization and MatMulNBits
(CPU kernels), Sigmoid / Gelu and Mul."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper

from tests.op_mappings.onnx.contrib.oracle import check_ms, expect_error, ms_model, rng_array
from tests.op_mappings.onnx.contrib.quant_oracle import pack_bits

MS = "com.microsoft"
K, N, NKV, BLOCK = 32, 12, 8, 16


def _weight(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = rng.integers(0, 16, (n, K))
    return (pack_bits(q, 4).reshape(n, K // BLOCK, BLOCK // 2),
            rng.uniform(0.01, 0.1, (n, K // BLOCK)).astype(np.float32))


def _norm_nodes(ins: list[str], eps: float) -> tuple[list[Any], str, str]:
    a, skip, scale = ins[:3]
    if not scale:
        return [], a, ""
    if skip:
        return [helper.make_node("SkipSimplifiedLayerNormalization", [a, skip, scale],
                                 ["an", "", "", "isum"], domain=MS, epsilon=eps)], "an", "isum"
    return [helper.make_node("SimplifiedLayerNormalization", [a, scale], ["an"], axis=-1,
                             epsilon=eps)], "an", ""


def _mm(a: str, ins: list[str], first: int, n: int, out: str) -> Any:
    return helper.make_node("MatMulNBits", [a, ins[first], ins[first + 1], "", "",
                                            ins[first + 2]], [out], domain=MS, K=K, N=n,
                            bits=4, block_size=BLOCK)


def _mlp_reference(act: str, eps: float) -> Any:
    def build(ins: list[str], outs: list[str]) -> list[Any]:
        nodes, a, total = _norm_nodes(ins, eps)
        nodes += [_mm(a, ins, 3, N, "gate"), _mm(a, ins, 6, N, "up")]
        if act == "gelu":
            nodes.append(helper.make_node("Gelu", ["gate"], ["g"]))
        else:
            nodes += [helper.make_node("Sigmoid", ["gate"], ["sg"]),
                      helper.make_node("Mul", ["gate", "sg"], ["g"])]
        nodes.append(helper.make_node("Mul", ["g", "up"], [outs[0]]))
        if len(outs) > 1:
            nodes.append(helper.make_node("Identity", [total], [outs[1]]))
        return nodes
    return build


@pytest.mark.parametrize("act", ["silu", "gelu"])
@pytest.mark.parametrize("norm", ["none", "rms", "skip"])
@pytest.mark.parametrize("bias", [False, True])
def test_matmul_nbits_mlp(act: str, norm: str, bias: bool) -> None:
    (gb, gs), (ub, us) = _weight(N, 1), _weight(N, 2)
    a = rng_array(2, 3, K, seed=3)
    items = [("a", a), ("skip", rng_array(2, 3, K, seed=4) if norm == "skip" else None),
             ("ns", rng_array(K, seed=5) if norm != "none" else None), ("gb", gb), ("gs", gs),
             ("gbias", rng_array(N, seed=6) if bias else None), ("ub", ub), ("us", us),
             ("ubias", rng_array(N, seed=7) if bias else None)]
    outputs = ("y", "sum") if norm == "skip" else ("y",)
    check_ms("MatMulNBitsMlp", items, {"activation": act, "K": K, "N": N,
                                       "block_size": BLOCK, "epsilon": 1e-5},
             outputs=outputs, constants=("ns", "gb", "gs", "gbias", "ub", "us", "ubias"),
             reference=_mlp_reference(act, 1e-5), rtol=1e-4, atol=1e-4)


def _qkv_reference(eps: float) -> Any:
    def build(ins: list[str], outs: list[str]) -> list[Any]:
        nodes, a, total = _norm_nodes(ins, eps)
        nodes += [_mm(a, ins, 3, N, outs[0]), _mm(a, ins, 6, NKV, outs[1]),
                  _mm(a, ins, 9, NKV, outs[2])]
        if len(outs) > 3:
            nodes.append(helper.make_node("Identity", [total], [outs[3]]))
        return nodes
    return build


@pytest.mark.parametrize("skip", [False, True])
def test_matmul_nbits_qkv(skip: bool) -> None:
    (qb, qs), (kb, ks), (vb, vs) = _weight(N, 8), _weight(NKV, 9), _weight(NKV, 10)
    items = [("a", rng_array(2, 3, K, seed=11)),
             ("skip", rng_array(2, 3, K, seed=12) if skip else None),
             ("ns", rng_array(K, seed=13)), ("qb", qb), ("qs", qs),
             ("qbias", rng_array(N, seed=14)), ("kb", kb), ("ks", ks), ("kbias", None),
             ("vb", vb), ("vs", vs), ("vbias", rng_array(NKV, seed=15))]
    outputs = ("q", "k", "v", "sum") if skip else ("q", "k", "v")
    check_ms("MatMulNBitsQkv", items, {"K": K, "Nq": N, "Nkv": NKV, "block_size": BLOCK,
                                       "epsilon": 1e-6},
             outputs=outputs, constants=tuple(n for n, _ in items[2:]),
             reference=_qkv_reference(1e-6), rtol=1e-4, atol=1e-4)


def test_malformed_nodes() -> None:
    (gb, gs) = _weight(N, 1)
    items = [("a", rng_array(2, 3, K)), ("skip", None), ("ns", None), ("gb", gb), ("gs", gs),
             ("gbias", None), ("ub", gb), ("us", gs)]
    expect_error(ms_model("MatMulNBitsMlp", items, {"activation": "relu", "K": K, "N": N,
                                                     "block_size": BLOCK},
                          constants=("gb", "gs", "ub", "us")),
                 "unsupported_attribute", "activation 'relu'")
