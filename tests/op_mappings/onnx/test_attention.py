"""ONNX Attention (23, 24; 25 vs the ONNX reference evaluator) vs onnxruntime: 3-D and 4-D
inputs, grouped KV heads, bool and float masks (broadcast, shorter than the key length),
past/present, bottom-right causal, nonpad_kv_seqlen, scale, softcap, softmax_precision,
qk_matmul_output modes 0 to 3 (mode 2's excluded keys vs the ONNX reference), float16,
malformed nodes; the `UseFunctionBody` fallback to the schema's function body."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from onnx.reference import ReferenceEvaluator

import converter
from converter.core.errors import ConversionFailed, UseFunctionBody
from converter.core.ir import Node
from converter.core.webnn import ML
from converter.frontends.onnx.frontend import import_source
from converter.frontends.onnx.reader import read_onnx
from op_mappings.onnx import lookup
from tests.op_mappings.onnx.contrib.attention_harness import check_ms, conversion_error
from tests.op_mappings.onnx.harness import assert_close, node_model, rand, run_ort

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


def test_attention_bool_mask_folded_from_shapes() -> None:
    """A causal bool mask computed from constants (LessOrEqual of position ranges, as the
    dynamo exporter writes for BART) is folded by the importer, which carries bools as uint8:
    the folded uint8 mask is still a bool mask."""
    from onnx import TensorProto, helper, numpy_helper

    q, k, v = _qkv(4, 2, 4)
    rows = numpy_helper.from_array(np.arange(S, dtype=np.int64).reshape(S, 1) + (L - S), "rows")
    cols = numpy_helper.from_array(np.arange(L, dtype=np.int64).reshape(1, L), "cols")
    nodes = [helper.make_node("LessOrEqual", ["cols", "rows"], ["mask"]),
             helper.make_node("Attention", ["q", "k", "v", "mask"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape))
                     for n, a in (("q", q), ("k", k), ("v", v))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [rows, cols])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)],
                              ir_version=10)
    feeds = {"q": q, "k": k, "v": v}
    result = converter.convert(model)
    assert result.report.to_dict()["ops"]["LessOrEqual"]["folded"]
    assert_close(result.run(feeds)["y"], run_ort(model, feeds)["y"], 1e-4, 1e-5,
                 "Attention with a folded bool mask")


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


@pytest.mark.parametrize("mode", [0, 1, 3])
@pytest.mark.parametrize("softcap", [0.0, 2.0])
def test_attention_qk_output(mode: int, softcap: float) -> None:
    """Modes 0 (Q·Kᵀ scaled, before the softcap), 1 (after the softcap), 3 (softmax)."""
    q, k, v = _qkv(4, 2, 4)
    _attn(q, k, v, {"qk_matmul_output_mode": mode, "softcap": softcap, "is_causal": 1},
          mask=rand(S, L, seed=14), outputs=("y", "", "", "qk"))


@pytest.mark.parametrize("kind", ["bool", "float", "none"])
@pytest.mark.parametrize("const", [False, True])
@pytest.mark.parametrize("causal", [0, 1])
def test_attention_qk_output_mode2(kind: str, const: bool, causal: int) -> None:
    """Mode 2: the scores after the softcap and the masks, -inf where a key is excluded (the
    ONNX reference and the conformance data; onnxruntime writes the lowest float32 there)."""
    q, k, v = _qkv(4, 2, 4)
    rng = np.random.default_rng(17)
    mask = {"bool": rng.random((B, 1, S, L)) > 0.3, "float": rand(S, L, seed=18),
            "none": None}[kind]
    items = [("q", q), ("k", k), ("v", v), ("m", mask)]
    items = [(n, a) for n, a in items if a is not None]
    attrs = {"qk_matmul_output_mode": 2, "softcap": 2.0, "is_causal": causal}
    model = node_model("Attention", items, attrs, opset=23, outputs=("y", "", "", "qk"),
                       constants=("m",) if const else ())
    feeds = {n: a for n, a in items if not (const and n == "m")}
    got = converter.convert(model).run(feeds)
    ort_out = run_ort(model, feeds)
    lowest = np.finfo(np.float32).min
    assert_close(got["y"], ort_out["y"], 1e-4, 1e-5, "Attention y")
    np.testing.assert_array_equal(np.isneginf(got["qk"]), ort_out["qk"] == lowest)
    assert_close(got["qk"], np.where(ort_out["qk"] == lowest, -np.inf, ort_out["qk"]),
                 1e-4, 1e-5, "Attention qk (mode 2)")
    expected = ReferenceEvaluator(model).run(None, feeds)
    assert_close(got["qk"], expected[1], 1e-4, 1e-5, "Attention qk (mode 2) vs ONNX reference")


@pytest.mark.parametrize("mode", [1, 2, 3])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_attention_qk_output_modes_onnx_reference(mode: int, dtype: str) -> None:
    """Modes 1-3 with 3-D grouped heads, past, a short bool mask, softcap and the opset-25
    window vs the ONNX reference evaluator (onnxruntime has no Attention-25)."""
    q, k, v = (t.astype(dtype) for t in _qkv(4, 2, 3))
    past = (rand(B, 2, 2, H, seed=22, dtype=dtype), rand(B, 2, 2, H, seed=23, dtype=dtype))
    mask = np.random.default_rng(24).random((S, L)) > 0.2
    items = [("q", q), ("k", k), ("v", v), ("m", mask), ("pk", past[0]), ("pv", past[1])]
    attrs = {"q_num_heads": 4, "kv_num_heads": 2, "is_causal": 1, "softcap": 1.5,
             "left_window_size": 3, "qk_matmul_output_mode": mode}
    model = node_model("Attention", items, attrs, opset=25,
                       outputs=("y", "pk_out", "pv_out", "qk"))
    feeds = dict(items)
    expected = ReferenceEvaluator(model).run(None, feeds)
    got = converter.convert(model).run(feeds)
    tol = 1e-4 if dtype == "float32" else 4e-3
    for (name, value), ref in zip(got.items(), expected, strict=True):
        assert_close(value, ref, tol, tol, f"Attention-25 {name} (mode {mode})")


def test_attention_softmax_precision_float64() -> None:
    """softmax_precision DOUBLE is computed in float32, with a warning (the ONNX reference
    computes the softmax in float64)."""
    q, k, v = _qkv(4, 2, 4)
    items = [("q", q), ("k", k), ("v", v)]
    attrs = {"softmax_precision": 11, "is_causal": 1, "qk_matmul_output_mode": 3}
    model = node_model("Attention", items, attrs, opset=23, outputs=("y", "", "", "qk"))
    feeds = dict(items)
    result = converter.convert(model)
    assert any("softmax_precision float64 computes in float32" in w
               for w in result.report.warnings)
    assert result.report.nodes[0].status == "decomposed"  # the handler, not the body
    got = result.run(feeds)
    expected = ReferenceEvaluator(model).run(None, feeds)
    for (name, value), ref in zip(got.items(), expected, strict=True):
        assert_close(value, ref, 1e-5, 1e-6, f"Attention {name}")


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
                            {"qk_matmul_output_mode": 4}, outputs=("y", "", "", "qk"),
                            domain="", opset=23)
    assert "qk_matmul_output_mode must be 0, 1, 2 or 3, got 4" in text


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


# -- UseFunctionBody: a handler declining its node to the schema's function body ----------


def _import(model: Any, declines: set[str]) -> tuple[Any, Any]:
    """Import `model` with handlers of the ops in `declines` raising UseFunctionBody;
    returns (ImportResult, its context)."""

    def decline(ctx: Any, node: Node) -> list[Any]:
        raise UseFunctionBody(f"{node.op_type} declined by the test")

    def declining_lookup(op_type: str, domain: str, version: int) -> Any:
        handler = lookup(op_type, domain, version)
        if handler is not None and op_type in declines:
            handler = dataclasses.replace(handler, fn=decline)
        return handler

    ctx = ML().create_context()
    return import_source(read_onnx(model), lookup=declining_lookup, context=ctx), ctx


def test_use_function_body_inlines_the_schema_body() -> None:
    """A declined Attention node is converted through its schema function body: same
    results, reported as one decomposed node."""
    q, k, v = _qkv(4, 2, 4)
    items = [("q", q), ("k", k), ("v", v), ("m", rand(S, L, seed=25))]
    model = node_model("Attention", items, {"is_causal": 1, "softcap": 2.0}, opset=23)
    result, ctx = _import(model, {"Attention"})
    (record,) = result.report.nodes
    assert (record.op_type, record.status) == ("Attention", "decomposed")
    assert "softmax" in record.webnn_ops
    got = ctx.compute(result.graph, dict(items))
    assert_close(got["y"], run_ort(model, dict(items))["y"], 1e-4, 1e-5, "Attention body")


def test_use_function_body_without_body_is_unsupported() -> None:
    """An op without a function body: the handler's message, as an unsupported attribute."""
    model = node_model("MatMul", [("a", rand(2, 3)), ("b", rand(3, 4))], opset=23)
    with pytest.raises(ConversionFailed) as info:
        _import(model, {"MatMul"})
    (err,) = info.value.errors
    assert err.reason_code == "unsupported_attribute" and err.op_type == "MatMul"
    assert err.message == "MatMul declined by the test"


def test_use_function_body_failing_body() -> None:
    """A body that fails (here every node of it declines too) gives one error for the node,
    naming the body (no second attempt)."""
    q, k, v = _qkv(2, 2, 4)
    model = node_model("Attention", [("q", q), ("k", k), ("v", v)], {}, opset=23)
    with pytest.raises(ConversionFailed) as info:
        _import(model, {"Attention", "MatMul", "Mul", "Softmax", "Transpose", "Add"})
    (err,) = info.value.errors
    assert err.op_type == "Attention" and "in the function body of Attention" in err.message
    assert "declined by the test" in err.message


def test_attention_bfloat16_softmax_precision_falls_back_to_the_body() -> None:
    """softmax_precision BFLOAT16: the handler declines; the body's bfloat16 cast is what
    fails."""
    q, k, v = _qkv(2, 2, 4)
    text = conversion_error("Attention", [("q", q), ("k", k), ("v", v)],
                            {"softmax_precision": 16}, domain="", opset=23)
    assert "in the function body of Attention" in text and "bfloat16" in text
