"""ONNX Attention (23, 24, 25) -> WebNN matmul / softmax decomposition.

softmax(softcap(scale·Q·Kᵀ) + mask)·V with one batched matmul for Q·Kᵀ and one for P·V;
grouped KV heads (q_num_heads a multiple of kv_num_heads) are folded into the query sequence
axis instead of repeating K and V. Past KV is concatenated (an empty past is specialised
away). The causal mask is aligned to the bottom right (query i sees keys j <= i + past
length, or j <= i + nonpad_kv_seqlen[b] - S), as onnxruntime and the ONNX reference do; the
sliding window of opset 25 uses the same query positions.
The shared helpers live in op_mappings/onnx/contrib/_attention_common.py.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel, UseFunctionBody
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._attention_common import (
    Mask,
    Value,
    arith,
    attend,
    check_arity,
    compare,
    default_scale,
    flag_attr,
    float_attr,
    float_input,
    int_attr,
    int_value,
    mask_and,
    merge_heads,
    operand,
    optional_past,
    reshape,
    scalar,
    shape_of,
    split_heads,
    value,
)

_TYPES = {1: "float32", 10: "float16", 11: "float64", 16: "bfloat16"}


def _mask(ctx: ImportContext, name: str, batch: int, heads: int, seq: int, total: int
          ) -> tuple[Value | None, Mask | None]:
    """attn_mask as (additive float bias, boolean allowed-mask), one of them None. The mask
    broadcasts to [B, N, S, T]; a last dimension shorter than T is padded with -inf / False."""
    shape = tuple(int(d) for d in ctx.shape(name))
    if not 1 <= len(shape) <= 4:
        raise InvalidModel(f"attn_mask must have rank 1 to 4, got {list(shape)}")
    full = (batch, heads, seq, total)
    lead = (1,) * (4 - len(shape)) + shape
    if lead[3] > total or any(d not in (1, f) for d, f in zip(lead[:3], full, strict=False)):
        raise InvalidModel(f"attn_mask of shape {list(shape)} does not broadcast to "
                           f"{list(full)}")
    m = value(ctx, name)
    # ONNX attn_mask is bool or float: a uint8 value is a bool the importer carries as uint8
    # (an operand, or a constant it folded, e.g. a causal mask computed from shapes)
    is_bool = (m.dtype in (np.bool_, np.uint8) if isinstance(m, np.ndarray)
               else m.data_type == "uint8")
    if not is_bool and (isinstance(m, np.ndarray) and m.dtype.kind != "f"
                        or not isinstance(m, np.ndarray) and not m.data_type.startswith("float")):
        raise InvalidModel("attn_mask must be bool or float")
    m = reshape(ctx, m, lead)
    pad = total - lead[3]
    if isinstance(m, np.ndarray):
        if pad:
            m = np.pad(m, [(0, 0)] * 3 + [(0, pad)],
                       constant_values=False if is_bool else -np.inf)
        return (None, m.astype(bool)) if is_bool else (m, None)
    if pad:
        m = ctx.builder.pad(m, [0, 0, 0, 0], [0, 0, 0, pad],
                            value=0 if is_bool else float("-inf"))
    return (None, m) if is_bool else (m, None)


@onnx_op("Attention", since=23)
def attention(ctx: ImportContext, node: Node) -> Outputs:
    """Q/K/V [B, S, hidden] (q_num_heads / kv_num_heads required) or [B, N, S, H]; V may have
    another head size; attn_mask bool (True = attend) or float (added), broadcast to
    [B, q_num_heads, S, T], its last dimension may be shorter than T (padded with False /
    -inf); past_key/past_value [B, kv_num_heads, P, H] -> present_key/present_value;
    is_causal (bottom-right aligned); nonpad_kv_seqlen (24; not with past);
    left_window_size / right_window_size (25; onnxruntime 1.31 has no opset-25 Attention, so
    they are checked against the ONNX reference evaluator); scale (default
    1/sqrt(H)); softcap (before the mask); softmax_precision; the qk_matmul_output output in
    modes 0 (scaled Q·Kᵀ, before the softcap), 1 (after the softcap), 2 (after the softcap
    and the masks, -inf where a key is excluded, as the ONNX reference; onnxruntime gives
    the lowest float there) and 3 (softmax); a query row whose keys are all masked by the
    bool mask, is_causal, the windows or nonpad_kv_seqlen gives 0. Restrictions:
    float32/float16 (float16 is computed in float32, so softmax_precision float16/float32
    changes nothing; float64 is computed in float32 with a warning; bfloat16 is left to the
    schema's function body, whose cast to bfloat16 does not convert either); a row whose
    float mask is -inf everywhere gives NaN."""
    b = ctx.builder
    check_arity(node, (3, 7 if node.version >= 24 else 6), (1, 4))
    mode = int_attr(node, "qk_matmul_output_mode", 0)
    want_qk = len(node.outputs) > 3 and bool(node.outputs[3])
    if want_qk and mode not in (0, 1, 2, 3):
        raise InvalidModel(f"qk_matmul_output_mode must be 0, 1, 2 or 3, got {mode}")
    precision = int_attr(node, "softmax_precision", 0)
    if precision and precision not in _TYPES:
        raise InvalidModel(f"softmax_precision {precision} is not a float type")
    if _TYPES.get(precision) == "bfloat16":  # before building anything: the body takes over
        raise UseFunctionBody("softmax_precision bfloat16 is not supported (WebNN has no "
                              "bfloat16)")
    if _TYPES.get(precision) == "float64":
        ctx.warn("softmax_precision float64 computes in float32")
    q = float_input(ctx, node.inputs[0], "Q")
    k = float_input(ctx, node.inputs[1], "K")
    v = float_input(ctx, node.inputs[2], "V")
    if not q.rank == k.rank == v.rank or q.rank not in (3, 4):
        raise InvalidModel(f"Q, K and V must all have rank 3 or all rank 4, got "
                           f"{list(q.shape)}, {list(k.shape)}, {list(v.shape)}")
    bsz = q.shape[0]
    if q.rank == 3:
        heads, kv_heads = int_attr(node, "q_num_heads", 0), int_attr(node, "kv_num_heads", 0)
        if heads <= 0 or kv_heads <= 0:
            raise InvalidModel("3-D inputs need positive q_num_heads and kv_num_heads")
        for what, t, n in (("Q", q, heads), ("K", k, kv_heads), ("V", v, kv_heads)):
            if t.shape[2] % n or t.shape[0] != bsz:
                raise InvalidModel(f"{what} of shape {list(t.shape)} does not split into {n} "
                                   "heads")
        qh = split_heads(ctx, q, heads)
        kh, vh = split_heads(ctx, k, kv_heads), split_heads(ctx, v, kv_heads)
    else:
        if node.version >= 25 and ("q_num_heads" in node.attrs or "kv_num_heads" in node.attrs):
            raise InvalidModel("q_num_heads and kv_num_heads must not be given with 4-D inputs")
        qh, kh, vh = q, k, v
        heads, kv_heads = q.shape[1], k.shape[1]
    if kh.shape[0] != bsz or vh.shape[:3] != kh.shape[:3] or kh.shape[3] != qh.shape[3]:
        raise InvalidModel(f"K {list(kh.shape)} / V {list(vh.shape)} (as [B, N, L, H]) do "
                           f"not match Q {list(qh.shape)}")
    if heads % kv_heads:
        raise InvalidModel(f"q_num_heads {heads} is not a multiple of kv_num_heads "
                           f"{kv_heads}")
    seq, size = qh.shape[2], qh.shape[3]

    pk_name, pv_name = node.input(4), node.input(5)
    if bool(pk_name) != bool(pv_name):
        raise InvalidModel("past_key and past_value must be given together")
    past_len = 0
    if pk_name:
        for name, t, what in ((pk_name, kh, "past_key"), (pv_name, vh, "past_value")):
            shp = shape_of(ctx, name, (4,), what)
            if shp[:2] != t.shape[:2] or shp[3] != t.shape[3]:
                raise InvalidModel(f"{what} of shape {list(shp)} must be [{bsz}, {kv_heads}, "
                                   f"P, {t.shape[3]}]")
        past_len = int(ctx.shape(pk_name)[2])
        if ctx.shape(pv_name)[2] != past_len:
            raise InvalidModel("past_key and past_value have different lengths")
    past_k, past_v = optional_past(ctx, pk_name, 2), optional_past(ctx, pv_name, 2)
    k_all = kh if past_k is None else b.concat([past_k, kh], 2)
    v_all = vh if past_v is None else b.concat([past_v, vh], 2)
    total = k_all.shape[2]

    biases: list[Value] = []
    allowed: Mask | None = None
    if node.input(3):
        bias, allowed = _mask(ctx, node.inputs[3], bsz, heads, seq, total)
        if bias is not None:
            biases.append(bias)
    key_pos = np.arange(total, dtype=np.int32).reshape(1, 1, 1, total)
    offset: Value = np.asarray(past_len, np.int32)
    nonpad = node.input(6)
    if nonpad:
        if pk_name:
            raise InvalidModel("nonpad_kv_seqlen cannot be combined with past_key/past_value")
        if shape_of(ctx, nonpad, (1,), "nonpad_kv_seqlen") != (bsz,):
            raise InvalidModel(f"nonpad_kv_seqlen must be [{bsz}]")
        lengths = reshape(ctx, int_value(ctx, nonpad), [bsz, 1, 1, 1])
        allowed = mask_and(ctx, allowed, compare(ctx, "lt", key_pos, lengths))
        offset = arith(ctx, "sub", lengths, seq)
    rows = np.arange(seq, dtype=np.int32).reshape(1, 1, seq, 1)
    position = arith(ctx, "add", offset, rows)  # of each query row among the keys
    if flag_attr(node, "is_causal"):
        allowed = mask_and(ctx, allowed, compare(ctx, "le", key_pos, position))
    left, right = int_attr(node, "left_window_size", -1), int_attr(node, "right_window_size", -1)
    if left < -1 or right < -1:
        raise InvalidModel(f"left_window_size / right_window_size must be -1 or >= 0, got "
                           f"{left} / {right}")
    if left >= 0:
        allowed = mask_and(ctx, allowed,
                           compare(ctx, "ge", key_pos, arith(ctx, "sub", position, left)))
    if right >= 0:
        allowed = mask_and(ctx, allowed,
                           compare(ctx, "le", key_pos, arith(ctx, "add", position, right)))

    dt = q.data_type
    work = "float32"  # float16 is computed in float32 (as onnxruntime does), cast back at the end
    if dt != work:
        qh, k_att, v_att = (b.cast(t, work) for t in (qh, k_all, v_all))
        biases = [b.cast(t, work) if isinstance(t, MLOperand) else t for t in biases]
    else:
        k_att, v_att = k_all, v_all
    scale = default_scale(float_attr(node, "scale", 0.0), size)
    softcap = float_attr(node, "softcap", 0.0)
    extra = {0: "raw", 1: "raw", 2: "masked", 3: "probs"}[mode] if want_qk else None
    out, qk = attend(ctx, qh, k_att, v_att, scale=scale, biases=biases, exclude=allowed,
                     softcap=softcap, extra=extra, zero_empty_rows=True)
    if qk is not None and mode == 1 and softcap > 0.0:  # the scores after the softcap
        cap = scalar(ctx, softcap, work)
        qk = b.mul(b.tanh(b.div(qk, cap)), cap)
    if qk is not None and mode == 2 and allowed is not None:
        # the scores going into the softmax, with -inf (not the lowest finite value the
        # softmax gets) where the masks exclude a key, as the ONNX bias does
        if isinstance(allowed, np.ndarray):
            if not allowed.all():
                qk = b.add(qk, ctx.constant(np.where(allowed, 0.0, -np.inf).astype(work)))
        else:
            qk = b.where(operand(ctx, allowed, "uint8"), qk, scalar(ctx, float("-inf"), work))
    if dt != work:
        out = b.cast(out, dt)
        qk = None if qk is None else b.cast(qk, dt)
    y = merge_heads(ctx, out) if q.rank == 3 else out
    results = [y, k_all if len(node.outputs) > 1 and node.outputs[1] else None,
               v_all if len(node.outputs) > 2 and node.outputs[2] else None, qk]
    return results[:len(node.outputs)]
