"""Zoo-level check of the optimizer-fusion contrib ops: a tiny two-layer BERT-like encoder
built by hand the way onnxruntime's transformer optimizer leaves a BERT model
(EmbedLayerNormalization -> self-attention (FusedMatMul for Q·Kᵀ) -> SkipLayerNormalization
-> FFN with FastGelu -> SkipLayerNormalization -> FFN with BiasGelu ->
SkipLayerNormalization), converted and compared end to end with onnxruntime."""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.op_mappings.onnx.contrib.oracle import MS, compare
from tests.op_mappings.onnx.harness import IR_VERSION, run_ort

B, S, H, FF, VOCAB, MAXPOS = 2, 6, 16, 32, 30, 12


def tiny_bert(seed: int = 0) -> onnx.ModelProto:
    """The encoder: inputs input_ids, segment_ids, attention_mask ([B, S] int32); outputs
    last_hidden [B, S, H] and mask_index [B]."""
    rng = np.random.default_rng(seed)
    inits: list[onnx.TensorProto] = []

    def w(name: str, *shape: int, scale: float = 0.3) -> str:
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def c(name: str, value: np.ndarray | np.generic) -> str:
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    nodes = [helper.make_node(
        "EmbedLayerNormalization",
        ["input_ids", "segment_ids", w("word", VOCAB, H), w("pos", MAXPOS, H),
         w("seg", 2, H), w("emb_g", H, scale=1.0), w("emb_b", H), "attention_mask"],
        ["emb", "mask_index"], domain=MS, epsilon=1e-12, name="embed")]
    # additive attention mask [B, 1, 1, S]: (1 - mask) * -10000
    nodes += [
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Sub", [c("one", np.float32(1)), "mask_f"], ["inv_mask"]),
        helper.make_node("Mul", ["inv_mask", c("neg", np.float32(-10000))], ["add_mask2"]),
        helper.make_node("Unsqueeze", ["add_mask2", c("axes12", np.array([1, 2], np.int64))],
                         ["add_mask"]),
    ]
    # self-attention, one head
    nodes += [
        helper.make_node("MatMul", ["emb", w("wq", H, H)], ["q0"]),
        helper.make_node("Add", ["q0", w("bq", H)], ["q"]),
        helper.make_node("MatMul", ["emb", w("wk", H, H)], ["k0"]),
        helper.make_node("Add", ["k0", w("bk", H)], ["k"]),
        helper.make_node("MatMul", ["emb", w("wv", H, H)], ["v0"]),
        helper.make_node("Add", ["v0", w("bv", H)], ["v"]),
        helper.make_node("FusedMatMul", ["q", "k"], ["scores3"], domain=MS, transB=1,
                         alpha=1.0 / math.sqrt(H), name="qk"),
        helper.make_node("Unsqueeze", ["scores3", c("axis1", np.array([1], np.int64))],
                         ["scores"]),
        helper.make_node("Add", ["scores", "add_mask"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["probs"], axis=-1),
        helper.make_node("Squeeze", ["probs", "axis1"], ["probs3"]),
        helper.make_node("MatMul", ["probs3", "v"], ["ctx"]),
        helper.make_node("MatMul", ["ctx", w("wo", H, H)], ["attn"]),
        helper.make_node("SkipLayerNormalization",
                         ["attn", "emb", w("ln1_g", H, scale=1.0), w("ln1_b", H),
                          w("bo", H)], ["h1"], domain=MS, epsilon=1e-12, name="ln1"),
    ]
    # FFN 1: FastGelu with its bias input
    nodes += [
        helper.make_node("MatMul", ["h1", w("w1", H, FF)], ["f1"]),
        helper.make_node("FastGelu", ["f1", w("b1", FF)], ["g1"], domain=MS, name="gelu1"),
        helper.make_node("MatMul", ["g1", w("w2", FF, H)], ["f2"]),
        helper.make_node("SkipLayerNormalization",
                         ["f2", "h1", w("ln2_g", H, scale=1.0), w("ln2_b", H), w("b2", H)],
                         ["h2", "", "", "h2_sum"], domain=MS, epsilon=1e-12, name="ln2"),
    ]
    # FFN 2: BiasGelu
    nodes += [
        helper.make_node("MatMul", ["h2", w("w3", H, FF)], ["f3"]),
        helper.make_node("BiasGelu", ["f3", w("b3", FF)], ["g3"], domain=MS, name="gelu2"),
        helper.make_node("MatMul", ["g3", w("w4", FF, H)], ["f4"]),
        helper.make_node("SkipLayerNormalization",
                         ["f4", "h2", w("ln3_g", H, scale=1.0), w("ln3_b", H), w("b4", H)],
                         ["last_hidden"], domain=MS, epsilon=1e-12, name="ln3"),
    ]
    ids = [helper.make_tensor_value_info(n, TensorProto.INT32, [B, S])
           for n in ("input_ids", "segment_ids", "attention_mask")]
    outs = [helper.make_tensor_value_info("last_hidden", TensorProto.FLOAT, [B, S, H]),
            helper.make_tensor_value_info("mask_index", TensorProto.INT32, [B])]
    graph = helper.make_graph(nodes, "tiny_bert", ids, outs, inits)
    return helper.make_model(graph, ir_version=IR_VERSION, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])


def _feeds(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    mask = np.ones((B, S), np.int32)
    mask[1, 4:] = 0
    return {"input_ids": rng.integers(0, VOCAB, (B, S)).astype(np.int32),
            "segment_ids": rng.integers(0, 2, (B, S)).astype(np.int32),
            "attention_mask": mask}


@pytest.mark.parametrize("seed", [0, 1])
def test_tiny_bert_end_to_end(seed: int) -> None:
    model = tiny_bert(seed)
    feeds = _feeds(seed)
    expected = run_ort(model, feeds)
    result = compare(model, feeds, expected, "tiny_bert", 1e-4, 1e-4)
    ops = result.report.to_dict()["ops"]
    for op in ("EmbedLayerNormalization", "SkipLayerNormalization", "FastGelu", "BiasGelu",
               "FusedMatMul"):
        entry = ops[f"{MS}::{op}"]
        assert not entry["unsupported"] and (entry["native"] or entry["decomposed"]), entry
    np.testing.assert_array_equal(result.run(feeds)["mask_index"], [S, 4])


@pytest.mark.parametrize("backend", ["onnxruntime", "torch"])
def test_tiny_bert_other_backends(backend: str) -> None:
    if backend == "torch":
        pytest.importorskip("torch")
    model = tiny_bert(2)
    feeds = _feeds(2)
    compare(model, feeds, run_ort(model, feeds), f"tiny_bert_{backend}", 1e-4, 1e-4,
            backend=backend)
