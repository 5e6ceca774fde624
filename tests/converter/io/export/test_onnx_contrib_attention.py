"""The onnxruntime backend's Attention re-fusion (converter/runtimes/onnxruntime/lowering/attention.py):
a com.microsoft Attention node (packed QKV weights, optional 1-D end-position mask_index) is
converted (the importer decomposes it), the WebNN graph is lowered with and without
`contrib_ops`, both lowerings run in onnxruntime and are compared with a float64 numpy oracle
(softmax(scale·Q·Kᵀ + mask)·V per head, keys j ≥ end[b] getting mask_filter_value added);
the fused lowering holds one Attention node and no Softmax. Forms the fusion leaves alone
(unidirectional) keep their decomposition; the standard export emits standard ONNX only."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import converter
from converter.runtimes.onnxruntime.to_onnx import to_onnx
from converter.validate import compile_graph
from tests.converter.io.export.onnx_run import op_counts, run_onnx
from tests.op_mappings.onnx.harness import node_model

B, S, D, N, H = 2, 6, 24, 4, 8
RNG = np.random.default_rng(5)


def _oracle(x: np.ndarray, w: np.ndarray, bias: np.ndarray, end: np.ndarray | None,
            scale: float, fill: float) -> np.ndarray:
    qkv = x.astype(np.float64) @ w.astype(np.float64) + bias
    q, k, v = (qkv[..., i * N * H:(i + 1) * N * H].reshape(B, S, N, H).transpose(0, 2, 1, 3)
               for i in range(3))
    scores = q @ k.transpose(0, 1, 3, 2) * scale
    if end is not None:
        scores = scores + np.where(np.arange(S)[None, :] < end[:, None], 0.0,
                                   fill)[:, None, None, :]
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.asarray((p @ v).transpose(0, 2, 1, 3).reshape(B, S, N * H))


def _case(mask: bool, attrs: dict[str, Any] | None = None) -> tuple[Any, dict[str, np.ndarray],
                                                                    np.ndarray]:
    x = RNG.uniform(-1, 1, (B, S, D)).astype(np.float32)
    w = RNG.uniform(-0.5, 0.5, (D, 3 * N * H)).astype(np.float32)
    bias = RNG.uniform(-0.5, 0.5, 3 * N * H).astype(np.float32)
    end = np.array([S, 3], np.int32)
    inputs: list[tuple[str, np.ndarray | None]] = [("x", x), ("w", w), ("bias", bias)]
    if mask:
        inputs.append(("mask_index", end))
    all_attrs = {"num_heads": N, **(attrs or {})}
    model = node_model("Attention", inputs, all_attrs, outputs=("y",),
                       constants=["w", "bias"], domain="com.microsoft", opset=17)
    feeds = {n: a for n, a in inputs if a is not None and n not in ("w", "bias")}
    scale = float(all_attrs.get("scale", 1 / math.sqrt(H)))
    want = _oracle(x, w, bias, end if mask else None, scale,
                   float(all_attrs.get("mask_filter_value", -10000.0)))
    return converter.convert(model, target="spec").graph, feeds, want


@pytest.mark.parametrize("mask", [False, True], ids=["no_mask", "mask_index"])
@pytest.mark.parametrize("attrs", [{}, {"scale": 0.3, "mask_filter_value": -500.0}],
                         ids=["defaults", "scale_fill"])
def test_attention_is_fused_and_matches_the_oracle(mask: bool, attrs: dict[str, Any]) -> None:
    graph, feeds, want = _case(mask, attrs)
    fused, plain = to_onnx(graph, contrib_ops=True), to_onnx(graph)
    ops = op_counts(fused)
    assert ops["Attention"] == 1 and "Softmax" not in ops, ops
    assert all(n.domain in ("", "ai.onnx") for n in plain.graph.node)
    for model in (fused, plain):
        (got,) = run_onnx(model, feeds)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    (got,) = compile_graph(graph, "onnxruntime").run(feeds).values()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_unidirectional_attention_is_left_decomposed() -> None:
    graph, _, _ = _case(False, {"unidirectional": 1})
    assert "Attention" not in op_counts(to_onnx(graph, contrib_ops=True))
