"""com.microsoft GroupQueryAttention vs onnxruntime: prefill (no past, empty past, fixed-size
past buffer), decode steps (uniform and ragged seqlens_k, constant or graph input), a
multi-token step after the prompt, rotary (interleaved, partial, position_ids), packed QKV,
local window, softcap, scale, smooth softmax / head_sink, attention_bias, causal=0,
float16, and malformed nodes."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.op_mappings.onnx.contrib.attention_harness import check_ms, conversion_error
from tests.op_mappings.onnx.harness import IR_VERSION, check_model, rand

B, N, NK, H = 2, 4, 2, 16
OUTS = ("y", "present_k", "present_v")


def _gqa(seq: int, total: int, seqlens: list[int], *, past: int | None = None,
         attrs: dict[str, Any] | None = None, const_seqlens: bool = True,
         packed: bool = False, rotary_half: int = 0, position_ids: np.ndarray | None = None,
         attn_bias: bool = False, head_sink: bool = False, batch: int = B,
         dtype: str = "float32", tol: float = 1e-4) -> dict[str, float]:
    q = rand(batch, seq, N * H, seed=1, low=-1, high=1)
    k = rand(batch, seq, NK * H, seed=2, low=-1, high=1)
    v = rand(batch, seq, NK * H, seed=3, low=-1, high=1)
    inputs: list[tuple[str, np.ndarray | None]] = (
        [("qkv", np.concatenate([q, k, v], -1)), ("k", None), ("v", None)] if packed
        else [("q", q), ("k", k), ("v", v)])
    if past is None:
        inputs += [("past_k", None), ("past_v", None)]
    else:
        inputs += [("past_k", rand(batch, NK, past, H, seed=4)),
                   ("past_v", rand(batch, NK, past, H, seed=5))]
    inputs += [("seqlens", np.array(seqlens, np.int32)), ("total", np.array(total, np.int32))]
    consts = ["total"] + (["seqlens"] if const_seqlens else [])
    extra: list[tuple[str, np.ndarray | None]] = [("cos", None), ("sin", None),
                                                  ("pos", position_ids), ("bias", None),
                                                  ("sink", None)]
    if rotary_half:
        angles = rand(32, rotary_half, seed=6, low=0, high=6)
        extra[0], extra[1] = ("cos", np.cos(angles)), ("sin", np.sin(angles))
        consts += ["cos", "sin"]
    if attn_bias:
        extra[3] = ("bias", rand(1, N, seq, total, seed=7))
    if head_sink:
        extra[4] = ("sink", rand(N, seed=8))
    while extra and extra[-1][1] is None:
        extra.pop()
    inputs += extra
    if dtype != "float32":
        inputs = [(n, a.astype(dtype) if a is not None and a.dtype == np.float32 else a)
                  for n, a in inputs]
    all_attrs = {"num_heads": N, "kv_num_heads": NK, "do_rotary": int(bool(rotary_half)),
                 **(attrs or {})}
    return check_ms("GroupQueryAttention", inputs, all_attrs, outputs=OUTS, constants=consts,
                    rtol=tol, atol=tol)


@pytest.mark.parametrize("past", [None, 0, 8])
@pytest.mark.parametrize("const_seqlens", [True, False])
def test_gqa_prefill(past: int | None, const_seqlens: bool) -> None:
    _gqa(5, 5, [4, 4], past=past, const_seqlens=const_seqlens)


def test_gqa_prefill_right_padding() -> None:
    """Batch row 1 holds 3 real tokens: its padded query rows see only keys 0..2."""
    _gqa(5, 5, [4, 2])
    _gqa(5, 5, [4, 2], const_seqlens=False)


@pytest.mark.parametrize("seqlens", [[5, 5], [5, 3]])
@pytest.mark.parametrize("const_seqlens", [True, False])
@pytest.mark.parametrize("buffer", [5, 8])
def test_gqa_decode(seqlens: list[int], const_seqlens: bool, buffer: int) -> None:
    """One decode step after 5 (or 3) tokens; the past is exactly the history (5) or a
    fixed 8-row buffer shared by every step."""
    _gqa(1, 6, seqlens, past=buffer, const_seqlens=const_seqlens)


@pytest.mark.parametrize("const_seqlens", [True, False])
def test_gqa_multi_token_step(const_seqlens: bool) -> None:
    _gqa(3, 7, [6], past=4, batch=1, const_seqlens=const_seqlens)
    _gqa(3, 7, [6], past=9, batch=1, const_seqlens=const_seqlens, rotary_half=8)


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("step", ["prefill", "decode", "decode_graph_seqlens"])
def test_gqa_rotary(interleaved: int, step: str) -> None:
    attrs = {"rotary_interleaved": interleaved}
    if step == "prefill":
        _gqa(5, 5, [4, 4], past=0, attrs=attrs, rotary_half=8)
    else:
        _gqa(1, 6, [5, 3], past=8, attrs=attrs, rotary_half=8,
             const_seqlens=step == "decode")


def test_gqa_rotary_partial_and_position_ids() -> None:
    global H
    saved, H = H, 32
    try:
        _gqa(5, 5, [4, 4], rotary_half=8)
        _gqa(1, 6, [5, 5], past=5, rotary_half=8,
             position_ids=np.array([[11], [7]], np.int64))
        _gqa(4, 4, [3, 3], rotary_half=8, position_ids=np.array([[2, 3, 4, 5]] * 2, np.int64))
    finally:
        H = saved


def test_gqa_packed_qkv() -> None:
    _gqa(5, 5, [4, 4], packed=True, rotary_half=8)
    _gqa(1, 6, [5, 4], past=5, packed=True, rotary_half=8, const_seqlens=False)


@pytest.mark.parametrize("attrs", [{"local_window_size": 2}, {"softcap": 2.0, "scale": 0.4},
                                   {"smooth_softmax": 1}, {"causal": 0}])
def test_gqa_options(attrs: dict[str, Any]) -> None:
    _gqa(5, 5, [4, 4], attrs=attrs)
    _gqa(1, 6, [5, 3], past=8, attrs=attrs)
    _gqa(1, 6, [5, 3], past=8, attrs=attrs, const_seqlens=False)


def test_gqa_attention_bias_and_head_sink() -> None:
    _gqa(5, 5, [4, 4], attn_bias=True, head_sink=True, attrs={"softcap": 3.0})
    _gqa(1, 6, [5, 2], past=6, attn_bias=True, head_sink=True, const_seqlens=False)


def test_gqa_float16() -> None:
    _gqa(5, 5, [4, 4], rotary_half=8, dtype="float16", tol=3e-3)
    _gqa(1, 6, [5, 3], past=8, rotary_half=8, dtype="float16", tol=3e-3)


def test_gqa_malformed() -> None:
    q, kv = rand(B, 1, N * H), rand(B, 1, NK * H)
    past = rand(B, NK, 5, H)
    base = [("q", q), ("k", kv), ("v", kv), ("pk", past), ("pv", past),
            ("sl", np.array([5, 5], np.int32)), ("t", np.array(6, np.int32))]
    gqa = {"num_heads": N, "kv_num_heads": NK}
    text = conversion_error("GroupQueryAttention", base, {"num_heads": N, "kv_num_heads": 3},
                            constants=["t"])
    assert "multiple of kv_num_heads (3)" in text
    text = conversion_error("GroupQueryAttention", base[:6], gqa)
    assert "expects 7 to 16 inputs, got 6" in text
    text = conversion_error("GroupQueryAttention", base, gqa)
    assert "input 6 ('t') must be known at conversion time" in text
    text = conversion_error("GroupQueryAttention", base[:3] + [("pk", past), ("pv", None)]
                            + base[5:], gqa, constants=["t"])
    assert "past_key and past_value must be given together" in text
    text = conversion_error("GroupQueryAttention", base, {**gqa, "local_window_size": 0},
                            constants=["t"])
    assert "local_window_size must be -1 or positive" in text
    text = conversion_error("GroupQueryAttention", base + [("c", None)] * 5 + [("ks", rand(1))],
                            gqa, constants=["t"])
    assert "input 12 (k_scale) is not supported" in text


def _builder_style_model(seq: int, past: int) -> onnx.ModelProto:
    """The onnxruntime-genai model builder's pattern: seqlens_k = ReduceSum(attention_mask)
    - 1 and total_sequence_length = Shape(attention_mask)[1], both cast to int32."""
    total = past + seq
    vi = helper.make_tensor_value_info
    inputs = [vi("q", TensorProto.FLOAT, [B, seq, N * H]),
              vi("k", TensorProto.FLOAT, [B, seq, NK * H]),
              vi("v", TensorProto.FLOAT, [B, seq, NK * H]),
              vi("past_k", TensorProto.FLOAT, [B, NK, past, H]),
              vi("past_v", TensorProto.FLOAT, [B, NK, past, H]),
              vi("attention_mask", TensorProto.INT64, [B, total])]
    angles = rand(32, H // 2, seed=6, low=0, high=6)
    inits = [numpy_helper.from_array(np.array([1], np.int64), "axes"),
             numpy_helper.from_array(np.array(1, np.int64), "one"),
             numpy_helper.from_array(np.cos(angles), "cos"),
             numpy_helper.from_array(np.sin(angles), "sin")]
    nodes = [helper.make_node("ReduceSum", ["attention_mask", "axes"], ["lengths"], keepdims=0),
             helper.make_node("Sub", ["lengths", "one"], ["last"]),
             helper.make_node("Cast", ["last"], ["seqlens_k"], to=TensorProto.INT32),
             helper.make_node("Shape", ["attention_mask"], ["mask_shape"]),
             helper.make_node("Gather", ["mask_shape", "one"], ["total64"], axis=0),
             helper.make_node("Cast", ["total64"], ["total"], to=TensorProto.INT32),
             helper.make_node("GroupQueryAttention",
                              ["q", "k", "v", "past_k", "past_v", "seqlens_k", "total", "cos",
                               "sin"], ["y", "present_k", "present_v"], domain="com.microsoft",
                              num_heads=N, kv_num_heads=NK, do_rotary=1)]
    graph = helper.make_graph(nodes, "gqa_builder", inputs,
                              [onnx.ValueInfoProto(name=n) for n in ("y", "present_k",
                                                                     "present_v")], inits)
    return helper.make_model(graph, ir_version=IR_VERSION,
                             opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid("com.microsoft", 1)])


@pytest.mark.parametrize("seq, past", [(5, 0), (1, 5)])
def test_gqa_model_builder_pattern(seq: int, past: int) -> None:
    """Prefill with an empty past (specialised away) and a decode step, seqlens_k computed
    in the graph from the attention_mask input (right padding in batch row 1)."""
    model = _builder_style_model(seq, past)
    mask = np.ones((B, past + seq), np.int64)
    if seq > 1:
        mask[1, -2:] = 0
    feeds = {"q": rand(B, seq, N * H, seed=1), "k": rand(B, seq, NK * H, seed=2),
             "v": rand(B, seq, NK * H, seed=3), "past_k": rand(B, NK, past, H, seed=4),
             "past_v": rand(B, NK, past, H, seed=5), "attention_mask": mask}
    check_model(model, feeds, "GroupQueryAttention", ("y", "present_k", "present_v"), 1e-4,
                1e-5)
