"""EmbedLayerNormalization vs onnxruntime (CPU kernel) and RelativePositionBias (CUDA only)
vs a standard-op graph in onnxruntime and onnxruntime's own unit-test vectors."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import converter
from tests.op_mappings.onnx.contrib.oracle import (
    ReferenceFn,
    check_ms,
    compare,
    expect_error,
    ms_model,
    rng_array,
)
from tests.op_mappings.onnx.harness import run_ort

B, S, H, VOCAB, MAXPOS = 2, 5, 8, 20, 16
RNG = np.random.default_rng(0)
IDS = RNG.integers(0, VOCAB, (B, S)).astype(np.int32)
SEG = RNG.integers(0, 2, (B, S)).astype(np.int32)
MASK = np.array([[1, 1, 1, 0, 0], [1, 0, 1, 2, 1]], np.int32)  # onnxruntime counts the 1s
POS = RNG.integers(0, MAXPOS, (1, S)).astype(np.int32)
WORD = rng_array(VOCAB, H, seed=1)
POS_EMB = rng_array(MAXPOS, H, seed=2)
SEG_EMB = rng_array(2, H, seed=3)
GAMMA = rng_array(H, seed=4)
BETA = rng_array(H, seed=5)
TABLES = ("word", "pos_emb", "seg_emb", "gamma", "beta")


def _embed_items(segment: bool, mask: bool, pos: np.ndarray | None,
                 dtype: str = "float32") -> list[tuple[str, np.ndarray | None]]:
    return [("ids", IDS), ("seg", SEG if segment else None), ("word", WORD.astype(dtype)),
            ("pos_emb", POS_EMB.astype(dtype)),
            ("seg_emb", SEG_EMB.astype(dtype) if segment else None),
            ("gamma", GAMMA.astype(dtype)), ("beta", BETA.astype(dtype)),
            ("mask", MASK if mask else None), ("pos", pos)]


@pytest.mark.parametrize("segment", [True, False])
@pytest.mark.parametrize("mask", [True, False])
@pytest.mark.parametrize("pos", [None, POS, np.repeat(POS, B, axis=0)],
                         ids=["no_pos", "pos_1xS", "pos_BxS"])
@pytest.mark.parametrize("const_tables", [True, False])
def test_embed_layer_norm(segment: bool, mask: bool, pos: np.ndarray | None,
                          const_tables: bool) -> None:
    check_ms("EmbedLayerNormalization", _embed_items(segment, mask, pos), {"epsilon": 1e-5},
             outputs=("y", "mask_index", "emb_sum"),
             constants=TABLES if const_tables else (), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("outputs", [("y",), ("y", "", "emb_sum"), ("y", "mask_index")])
def test_embed_layer_norm_optional_outputs(outputs: tuple[str, ...]) -> None:
    """onnxruntime's shape inference needs two outputs: its oracle always has all three."""
    items = _embed_items(True, True, None)
    model = ms_model("EmbedLayerNormalization", items, outputs=outputs, constants=TABLES)
    oracle = ms_model("EmbedLayerNormalization", items, constants=TABLES,
                      outputs=("y", "mask_index", "emb_sum"))
    feeds = {n: v for n, v in items if v is not None and n not in TABLES}
    expected = {k: v for k, v in run_ort(oracle, feeds).items() if k in outputs}
    compare(model, feeds, expected, "EmbedLayerNormalization", 1e-4, 1e-5)


def test_embed_layer_norm_float16() -> None:
    """onnxruntime's CPU kernel is float32 only: the float16 conversion is compared with its
    float32 result on the same (float16-exact) tables."""
    items16 = _embed_items(True, True, POS, "float16")
    items32 = [(n, v.astype(np.float32) if v is not None and v.dtype == np.float16 else v)
               for n, v in items16]
    outputs = ("y", "mask_index", "emb_sum")
    feeds = {n: v for n, v in items16 if v is not None}
    ref = run_ort(ms_model("EmbedLayerNormalization", items32, outputs=outputs),
                  {n: v for n, v in items32 if v is not None})
    expected = {k: v.astype(np.float16) if v.dtype == np.float32 else v for k, v in ref.items()}
    compare(ms_model("EmbedLayerNormalization", items16, outputs=outputs), feeds, expected,
            "EmbedLayerNormalization", 1e-3, 2e-3)


# -- RelativePositionBias -----------------------------------------------------------------------


def _rpb_reference(length: int, heads: int, num_buckets: int, max_distance: int,
                   bidirectional: bool) -> ReferenceFn:
    """Standard ONNX ops computing onnxruntime's bucket formula (int64 positions, float32
    logarithms) and gathering the table read as [heads, num_buckets]."""
    nb = num_buckets // 2 if bidirectional else num_buckets
    max_exact = nb // 2

    def c(name: str, value: np.ndarray | np.generic) -> onnx.NodeProto:
        return helper.make_node("Constant", [], [name],
                                value=numpy_helper.from_array(np.asarray(value), name))

    def build(ins: list[str], outs: list[str]) -> list[onnx.NodeProto]:
        nodes = [
            c("cols", np.arange(length, dtype=np.int64)[None, :]),
            c("rows", np.arange(length, dtype=np.int64)[:, None]),
            c("zero", np.int64(0)), c("one", np.int64(1)), c("nb", np.int64(nb)),
            c("me", np.int64(max_exact)), c("me_f", np.float32(max_exact)),
            c("top", np.int64(nb - 1)), c("span", np.float32(nb - max_exact)),
            c("ratio", np.float32(max_distance) / np.float32(max_exact)),
            c("shape", np.array([heads, num_buckets], np.int64)),
            c("axes", np.array([0], np.int64)),
            helper.make_node("Sub", ["cols", "rows"], ["rel"]),
        ]
        if bidirectional:
            nodes += [
                helper.make_node("Greater", ["rel", "zero"], ["pos"]),
                helper.make_node("Cast", ["pos"], ["pos_i"], to=7),
                helper.make_node("Mul", ["pos_i", "nb"], ["base"]),
                helper.make_node("Abs", ["rel"], ["n"]),
            ]
        else:
            nodes += [
                helper.make_node("Min", ["rel", "zero"], ["neg"]),
                helper.make_node("Neg", ["neg"], ["n"]),
                helper.make_node("Mul", ["n", "zero"], ["base"]),
            ]
        nodes += [
            helper.make_node("Less", ["n", "me"], ["small"]),
            helper.make_node("Max", ["n", "one"], ["n1"]),
            helper.make_node("Cast", ["n1"], ["nf"], to=1),
            helper.make_node("Div", ["nf", "me_f"], ["q"]),
            helper.make_node("Log", ["q"], ["lq"]),
            helper.make_node("Log", ["ratio"], ["lr"]),
            helper.make_node("Div", ["lq", "lr"], ["frac"]),
            helper.make_node("Mul", ["frac", "span"], ["scaled"]),
            helper.make_node("Cast", ["scaled"], ["trunc"], to=7),
            helper.make_node("Add", ["trunc", "me"], ["large0"]),
            helper.make_node("Min", ["large0", "top"], ["large"]),
            helper.make_node("Where", ["small", "n", "large"], ["off"]),
            helper.make_node("Add", ["base", "off"], ["bucket"]),
            helper.make_node("Reshape", [ins[0], "shape"], ["flat"]),
            helper.make_node("Gather", ["flat", "bucket"], ["g"], axis=1),
            helper.make_node("Unsqueeze", ["g", "axes"], [outs[0]]),
        ]
        return nodes

    return build


@pytest.mark.parametrize("bidirectional", [0, 1])
@pytest.mark.parametrize("length,num_buckets,max_distance", [(7, 8, 16), (200, 32, 128),
                                                             (40, 10, 20)])
@pytest.mark.parametrize("const_table", [True, False])
def test_relative_position_bias(bidirectional: int, length: int, num_buckets: int,
                                max_distance: int, const_table: bool) -> None:
    heads = 3
    table = rng_array(num_buckets, heads, seed=length)
    lengths = np.array([length], np.int64)
    items = [("table", table), ("ql", lengths), ("kl", lengths)]
    res = check_ms("RelativePositionBias", items,
                   {"max_distance": max_distance, "is_bidirectional": bidirectional},
                   constants=("table", "ql", "kl") if const_table else ("ql", "kl"),
                   reference=_rpb_reference(length, heads, num_buckets, max_distance,
                                            bool(bidirectional)),
                   rtol=0, atol=0)
    ops = res.report.to_dict()["ops"]["com.microsoft::RelativePositionBias"]
    assert ops["folded" if const_table else "decomposed"]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("bidirectional,heads,table,expected", [
    # onnxruntime's RelativePositionBiasTest vectors (HF table [[1, 2], [3, 4], ...] stored
    # col-major), max_distance 128, 4 buckets, sequence length 2
    (1, 2, [1, 3, 5, 7, 2, 4, 6, 8], [1, 7, 3, 1, 2, 8, 4, 2]),
    (1, 3, [1, 4, 7, 10, 2, 5, 8, 11, 3, 6, 9, 12], [1, 10, 4, 1, 2, 11, 5, 2, 3, 12, 6, 3]),
    (0, 3, [1, 4, 7, 10, 2, 5, 8, 11, 3, 6, 9, 12], [1, 1, 4, 1, 2, 2, 5, 2, 3, 3, 6, 3]),
])
def test_relative_position_bias_onnxruntime_vectors(dtype: str, bidirectional: int, heads: int,
                                                    table: list[float],
                                                    expected: list[float]) -> None:
    items = [("table", np.array(table, dtype).reshape(4, heads)),
             ("ql", np.array([2], np.int64)), ("kl", np.array([2], np.int64))]
    model = ms_model("RelativePositionBias", items,
                     {"max_distance": 128, "is_bidirectional": bidirectional},
                     constants=("ql", "kl"))
    got = converter.convert(model).run({"table": items[0][1]})["y"]
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, np.array(expected, dtype).reshape(1, heads, 2, 2))


def test_malformed_nodes() -> None:
    ids = [("ids", IDS)]
    expect_error(ms_model("EmbedLayerNormalization", ids + _embed_items(True, False, None)[1:6]),
                 "invalid_model", "takes 7 to 9 inputs, the node has 6")
    items = _embed_items(True, False, None)
    items[4] = ("seg_emb", None)
    expect_error(ms_model("EmbedLayerNormalization", items, outputs=("y", "m")),
                 "invalid_model", "segment_ids and segment_embedding together")
    items = _embed_items(False, False, None)
    items[3] = ("pos_emb", rng_array(3, H))
    expect_error(ms_model("EmbedLayerNormalization", items, outputs=("y", "m")),
                 "invalid_model", "sequence length 5 exceeds the 3 rows")
    items = _embed_items(False, False, None)
    items[5] = ("gamma", rng_array(H + 1))
    expect_error(ms_model("EmbedLayerNormalization", items, outputs=("y", "m")),
                 "invalid_model", "gamma has shape [9], expected [8]")
    items = _embed_items(False, False, np.zeros((3, S), np.int32))
    expect_error(ms_model("EmbedLayerNormalization", items, outputs=("y", "m")),
                 "invalid_model", "position_ids of shape [3, 5]")
    items = _embed_items(False, False, None)
    items[0] = ("ids", IDS.astype(np.float32))
    expect_error(ms_model("EmbedLayerNormalization", items, outputs=("y", "m")),
                 "unsupported_data_type", "input_ids (input 0) has data type float32")

    def rpb(q: int, k: int, attrs: dict[str, int],
            const: bool = True) -> onnx.ModelProto:
        items = [("table", rng_array(8, 2)), ("ql", np.array([q], np.int64)),
                 ("kl", np.array([k], np.int64))]
        return ms_model("RelativePositionBias", items, attrs,
                        constants=("ql", "kl") if const else ("kl",))

    expect_error(rpb(3, 4, {"max_distance": 16}), "unsupported_attribute",
                 "query_length 3 != key_length 4")
    expect_error(rpb(3, 3, {}), "invalid_model", "required attribute 'max_distance'")
    expect_error(rpb(3, 3, {"max_distance": 2, "is_bidirectional": 1}), "invalid_model",
                 "needs max_distance > 2")
    expect_error(rpb(3, 3, {"max_distance": 16, "is_bidirectional": 3}), "invalid_model",
                 "is_bidirectional must be 0 or 1")
    expect_error(rpb(3, 3, {"max_distance": 16}, const=False), "requires_constant_input",
                 "'ql'")
