"""The onnxruntime backend's QAttention re-fusion (converter/runtimes/onnxruntime/lowering/
attention.py, quantized projection): a com.microsoft QAttention node (uint8 input, int8 /
uint8 weight, per-tensor or per-column weight scale and zero point, optional end-position
mask_index) is converted (the importer decomposes it), lowered for the backend (one
QAttention node, no Softmax) and run; the standard export keeps standard ONNX. Oracle:
float64 numpy, (x − zx)·(W − zw)·(sx·sw) + bias, then softmax(scale·Q·Kᵀ + mask)·V per
head (test_onnx_contrib_attention's oracle)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import converter
from converter.runtimes.onnxruntime.backend import OnnxRuntimeBackend
from converter.runtimes.onnxruntime.to_onnx import to_onnx
from converter.validate import compile_graph
from tests.converter.io.export.test_onnx_contrib_attention import B, D, H, N, S, _oracle
from tests.op_mappings.onnx.harness import node_model

TOTAL = 3 * N * H


@pytest.mark.parametrize("w_type", ["int8", "uint8"])
@pytest.mark.parametrize("per_column", [False, True], ids=["per_tensor", "per_column"])
@pytest.mark.parametrize("mask", [False, True], ids=["no_mask", "mask_index"])
def test_qattention_is_fused_and_matches_the_oracle(w_type: str, per_column: bool,
                                                    mask: bool) -> None:
    rng = np.random.default_rng(7)
    lo, hi = (-128, 128) if w_type == "int8" else (0, 256)
    x = rng.integers(0, 256, (B, S, D)).astype(np.uint8)
    w = rng.integers(lo, hi, (D, TOTAL)).astype(w_type)
    bias = rng.uniform(-0.5, 0.5, TOTAL).astype(np.float32)
    sx, zx = np.array(0.004, np.float32), np.array(131, np.uint8)
    cols = (TOTAL,) if per_column else ()
    sw = rng.uniform(0.001, 0.003, cols).astype(np.float32)
    mid = (lo + hi) // 2
    zw = rng.integers(mid - 5, mid + 5, cols).astype(w_type)
    end = np.array([S, 3], np.int32)
    inputs = [("x", x), ("w", w), ("bias", bias), ("sx", sx), ("sw", sw),
              ("mask_index", end if mask else None), ("zx", zx), ("zw", zw)]
    model = node_model("QAttention", inputs, {"num_heads": N}, outputs=("y",),
                       constants=["w", "bias", "sx", "sw", "zx", "zw"],
                       domain="com.microsoft", opset=17)
    graph = converter.convert(model, target="spec").graph
    ops = Counter(n.op_type for n in OnnxRuntimeBackend("cpu").lower(graph).graph.node)
    assert ops["QAttention"] == 1 and "Softmax" not in ops, ops
    assert all(n.domain in ("", "ai.onnx") for n in to_onnx(graph).graph.node)
    feeds = {"x": x, **({"mask_index": end} if mask else {})}
    scale = np.float64(np.float32(sx) * sw.astype(np.float32))  # rounded once to float32
    w_eff = (w.astype(np.float64) - zw.astype(np.float64)) * scale
    want = _oracle(x.astype(np.float64) - float(zx), w_eff, bias.astype(np.float64),
                   end if mask else None, 1 / np.sqrt(H), -10000.0)
    (got,) = compile_graph(graph, "onnxruntime").run(feeds).values()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
