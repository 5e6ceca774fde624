"""com.microsoft Attention, MultiHeadAttention and DecoderMaskedMultiHeadAttention -> WebNN
matmul / softmax decompositions.

All three compute softmax(scale·Q·Kᵀ + attention_bias + mask)·V per head with one batched matmul for
Q·Kᵀ and one for P·V. As in onnxruntime's CPU kernels, keys hidden by a mask input get
`mask_filter_value` (default -10000) *added* to their score (a row whose keys are all padded
therefore still averages them instead of giving NaN), while future keys of a unidirectional
(causal) node drop out of the softmax entirely. Masks known at conversion time fold into one
constant.
Past state is concatenated in the graph; an empty past (length 0) is specialised away.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._attention_common import (
    Mask,
    attend,
    check_arity,
    default_scale,
    flag_attr,
    float_attr,
    float_input,
    int_attr,
    int_value,
    ints_attr,
    merge_heads,
    operand,
    optional_past,
    reject_inputs,
    require,
    shape_of,
    split_heads,
    value,
)
from op_mappings.onnx.contrib._attention_masks import (
    MASK_FILTER,
    attention_bias,
    causal_mask,
    key_mask,
)


def _num_heads(node: Node) -> int:
    heads = int_attr(node, "num_heads")
    if heads <= 0:
        raise InvalidModel(f"num_heads must be positive, got {heads}")
    return heads


def _wanted(node: Node, index: int) -> bool:
    return index < len(node.outputs) and bool(node.outputs[index])


@onnx_op("Attention", since=1, domain="com.microsoft")
def attention(ctx: ImportContext, node: Node) -> Outputs:
    """com.microsoft Attention: packed Q/K/V projection (input·weights + bias) then multi-head
    self-attention. mask_index forms: key lengths [B], end/start positions [2B], 0/1 masks
    [B, T] and [B, S, T], and the 4-D [B, 1, M, M] form (rows past..past+S; onnxruntime's CPU
    kernel rejects it, so it is checked against a numpy reference only); unidirectional=1 is
    causal; past [2, B, N, P, H] -> present [2, B, N, P+S, H]; qkv_hidden_sizes,
    scale (default 1/sqrt(head_size)), mask_filter_value (added to masked scores).
    Restrictions: float32/float16; no past_present_share_buffer / past_sequence_length, no
    do_rotary, no [3B+2] mask_index."""
    b = ctx.builder
    check_arity(node, (2, 7), (1, 2))
    heads = _num_heads(node)
    if flag_attr(node, "do_rotary"):
        raise UnsupportedAttribute("do_rotary=1 is not supported")
    if flag_attr(node, "past_present_share_buffer"):
        raise UnsupportedAttribute("past_present_share_buffer=1 is not supported")
    reject_inputs(node, [6], ["past_sequence_length"])
    x = float_input(ctx, require(node, 0, "input"), "input")
    if x.rank != 3:
        raise InvalidModel(f"input must have rank 3 [batch, sequence, hidden], got "
                           f"{list(x.shape)}")
    bsz, seq, in_hidden = x.shape
    w_shape = shape_of(ctx, require(node, 1, "weights"), (2,), "weights")
    if w_shape[0] != in_hidden:
        raise InvalidModel(f"weights of shape {list(w_shape)} do not match the input hidden "
                           f"size {in_hidden}")
    total_hidden = w_shape[1]
    sizes = ints_attr(node, "qkv_hidden_sizes")
    if sizes is None:
        if total_hidden % 3:
            raise InvalidModel(f"weights dimension 1 ({total_hidden}) is not 3·hidden_size; "
                               "give qkv_hidden_sizes")
        sizes = [total_hidden // 3] * 3
    if len(sizes) != 3 or sum(sizes) != total_hidden or sizes[0] != sizes[1] or min(sizes) <= 0:
        raise InvalidModel(f"qkv_hidden_sizes {sizes} must be three positive sizes, Q and K "
                           f"equal, summing to weights dimension 1 ({total_hidden})")
    for what, size in zip(("Q/K", "Q/K", "V"), sizes, strict=True):
        if size % heads:
            raise InvalidModel(f"{what} hidden size {size} is not divisible by num_heads "
                               f"{heads}")
    qkv = b.matmul(x, float_input(ctx, node.inputs[1], "weights"))
    if node.input(2):
        bias_shape = shape_of(ctx, node.inputs[2], (1,), "bias")
        if bias_shape != (total_hidden,):
            raise InvalidModel(f"bias of shape {list(bias_shape)} must be [{total_hidden}]")
        qkv = b.add(qkv, float_input(ctx, node.inputs[2], "bias"))
    return packed_self_attention(ctx, node, qkv, sizes, heads, mask_name=node.input(3),
                                 past_name=node.input(4), bias_name=node.input(5))


def packed_self_attention(ctx: ImportContext, node: Node, qkv: MLOperand, sizes: list[int],
                          heads: int, *, mask_name: str, past_name: str, bias_name: str
                          ) -> list[Any]:
    """The attention part of com.microsoft Attention (and QAttention) once the packed
    projection `qkv` [B, S, Q + K + V] (`sizes`) is computed: multi-head self-attention with
    the node's mask_index, past [2, B, N, P, H] -> present, attention_bias and attributes
    (unidirectional, scale, mask_filter_value); returns the node's outputs [output,
    present]."""
    b = ctx.builder
    bsz, seq = qkv.shape[0], qkv.shape[1]
    head_size, v_head_size = sizes[0] // heads, sizes[2] // heads
    unidirectional = flag_attr(node, "unidirectional")
    q, k, v = b.split(qkv, sizes, axis=2)
    qh, kh, vh = (split_heads(ctx, t, heads) for t in (q, k, v))

    want_present = _wanted(node, 1)
    if past_name:
        p_shape = shape_of(ctx, past_name, (5,), "past")
        if p_shape[:3] != (2, bsz, heads) or p_shape[4] != head_size:
            raise InvalidModel(f"past of shape {list(p_shape)} must be [2, {bsz}, {heads}, "
                               f"past_sequence_length, {head_size}]")
    past = optional_past(ctx, past_name, 3)
    present = None
    if past is not None or want_present:
        if head_size != v_head_size:
            raise InvalidModel("past/present need equal Q, K and V hidden sizes")
        new = b.concat([b.reshape(kh, [1, bsz, heads, seq, head_size]),
                        b.reshape(vh, [1, bsz, heads, seq, head_size])], 0)
        present = new if past is None else b.concat([past, new], 3)
    past_len = 0 if past is None else past.shape[3]
    total = past_len + seq
    if past is not None and present is not None:
        k_all, v_all = (b.reshape(t, [bsz, heads, total, head_size])
                        for t in b.split(present, 2, axis=0))
    else:
        k_all, v_all = kh, vh

    mask: Mask | None = None
    if mask_name:
        mask = key_mask(ctx, mask_name, bsz, seq, past_len, total, "mask_index")
    causal = causal_mask(seq, past_len, total) if unidirectional and seq > 1 else None
    biases = []
    if bias_name:
        biases.append(attention_bias(ctx, bias_name, bsz, heads, seq, total))
    out, _ = attend(ctx, qh, k_all, v_all,
                    scale=default_scale(float_attr(node, "scale", 0.0), head_size),
                    biases=biases, mask=mask, exclude=causal,
                    mask_fill=float_attr(node, "mask_filter_value", MASK_FILTER))
    return [merge_heads(ctx, out), present if want_present else None][:len(node.outputs)]


@onnx_op("MultiHeadAttention", since=1, domain="com.microsoft")
def multi_head_attention(ctx: ImportContext, node: Node) -> Outputs:
    """com.microsoft MultiHeadAttention: separate Q [B, S, D], K [B, L, D], V [B, L, Dv];
    packed QKV query [B, S, N, 3, H]; packed KV key [B, L, N, 2, H]; or K/V already in
    [B, N, L, H] (cross attention, no bias or past for them). bias [D + D + Dv];
    key_padding_mask [B] (key lengths), [B, T] or [B, S, T] (0/1); attention_bias
    [B or 1, N or 1, S, T]; past_key/past_value [B, N, P, H] -> present_key/present_value
    [B, N, P+L, H]; unidirectional=1 causal; scale (default 1/sqrt(head_size));
    mask_filter_value; the optional qk output (scaled Q·Kᵀ with bias and mask, before
    softmax). Restrictions: float32/float16; no past_sequence_length / cache_indirection
    (buffer sharing, beam search), no [3B+2] key_padding_mask."""
    b = ctx.builder
    check_arity(node, (1, 10), (1, 4))
    heads = _num_heads(node)
    reject_inputs(node, [8, 9], ["past_sequence_length", "cache_indirection"])
    unidirectional = flag_attr(node, "unidirectional")
    query = float_input(ctx, require(node, 0, "query"), "query")
    key_name, value_name = node.input(1), node.input(2)
    bias = None
    if node.input(3):
        bias = float_input(ctx, node.inputs[3], "bias")
        if bias.rank != 1:
            raise InvalidModel(f"bias must have rank 1, got {list(bias.shape)}")
    bnsh_kv = False
    if query.rank == 5:
        bsz, seq, n, three, head_size = query.shape
        if n != heads or three != 3:
            raise InvalidModel(f"packed QKV query of shape {list(query.shape)} must be "
                               f"[batch, sequence, {heads}, 3, head_size]")
        if key_name or value_name:
            raise InvalidModel("key and value must be absent with a packed QKV query")
        parts = [b.reshape(t, [bsz, seq, heads * head_size])
                 for t in b.split(query, 3, axis=3)]
        q, k, v = parts
        kv_seq, v_head_size = seq, head_size
    elif query.rank == 3:
        bsz, seq, hidden = query.shape
        if hidden % heads:
            raise InvalidModel(f"query hidden size {hidden} is not divisible by num_heads "
                               f"{heads}")
        head_size = hidden // heads
        q = query
        if not key_name:
            raise InvalidModel("key is required unless query is packed QKV")
        key = float_input(ctx, key_name, "key")
        if key.rank == 5:
            _, kv_seq, n, two, kh_size = key.shape
            if key.shape[0] != bsz or n != heads or two != 2 or kh_size != head_size:
                raise InvalidModel(f"packed KV key of shape {list(key.shape)} must be "
                                   f"[{bsz}, kv_sequence, {heads}, 2, {head_size}]")
            if value_name:
                raise InvalidModel("value must be absent with a packed KV key")
            k, v = (b.reshape(t, [bsz, kv_seq, hidden]) for t in b.split(key, 2, axis=3))
            v_head_size = head_size
        elif key.rank in (3, 4):
            if not value_name:
                raise InvalidModel("value is required with a rank-3 or rank-4 key")
            val = float_input(ctx, value_name, "value")
            if key.rank == 3:
                if key.shape[0] != bsz or key.shape[2] != hidden or val.rank != 3 or (
                        val.shape[:2] != key.shape[:2]) or val.shape[2] % heads:
                    raise InvalidModel(f"key {list(key.shape)} / value {list(val.shape)} "
                                       f"must be [{bsz}, L, {hidden}] / [{bsz}, L, Dv] with "
                                       f"Dv divisible by {heads}")
                kv_seq, v_head_size = key.shape[1], val.shape[2] // heads
                k, v = key, val
            else:
                bnsh_kv = True
                if key.shape[:2] != (bsz, heads) or key.shape[3] != head_size or (
                        val.rank != 4 or val.shape[:3] != key.shape[:3]):
                    raise InvalidModel(f"key {list(key.shape)} / value {list(val.shape)} "
                                       f"must be [{bsz}, {heads}, L, {head_size}] / "
                                       f"[{bsz}, {heads}, L, Hv]")
                kv_seq, v_head_size = key.shape[2], val.shape[3]
                k, v = key, val
        else:
            raise InvalidModel(f"key must have rank 3, 4 or 5, got {list(key.shape)}")
    else:
        raise InvalidModel(f"query must have rank 3 or 5, got {list(query.shape)}")

    hidden, v_hidden = heads * head_size, heads * v_head_size
    if bias is not None:
        if bias.shape[0] != 2 * hidden + v_hidden:
            raise InvalidModel(f"bias of shape {list(bias.shape)} must be "
                               f"[{2 * hidden + v_hidden}]")
        qb, kb, vb = b.split(bias, [hidden, hidden, v_hidden], axis=0)
        q = b.add(q, qb)
        if bnsh_kv:
            k = b.add(k, b.reshape(kb, [1, heads, 1, head_size]))
            v = b.add(v, b.reshape(vb, [1, heads, 1, v_head_size]))
        else:
            k, v = b.add(k, kb), b.add(v, vb)
    qh = split_heads(ctx, q, heads)
    kh = k if bnsh_kv else split_heads(ctx, k, heads)
    vh = v if bnsh_kv else split_heads(ctx, v, heads)

    past_k_name, past_v_name = node.input(6), node.input(7)
    if bool(past_k_name) != bool(past_v_name):
        raise InvalidModel("past_key and past_value must be given together")
    past_k = past_v = None
    if past_k_name:
        if bnsh_kv:
            raise InvalidModel("past_key/past_value cannot be used with a [B, N, L, H] key")
        for name, size, what in ((past_k_name, head_size, "past_key"),
                                 (past_v_name, v_head_size, "past_value")):
            shp = shape_of(ctx, name, (4,), what)
            if shp[:2] != (bsz, heads) or shp[3] != size:
                raise InvalidModel(f"{what} of shape {list(shp)} must be [{bsz}, {heads}, "
                                   f"past_sequence_length, {size}]")
        if ctx.shape(past_k_name)[2] != ctx.shape(past_v_name)[2]:
            raise InvalidModel("past_key and past_value have different sequence lengths")
        past_k = optional_past(ctx, past_k_name, 2)
        past_v = optional_past(ctx, past_v_name, 2)
    past_len = 0 if past_k is None else past_k.shape[2]
    k_all = kh if past_k is None else b.concat([past_k, kh], 2)
    v_all = vh if past_v is None else b.concat([past_v, vh], 2)
    total = past_len + kv_seq

    mask: Mask | None = None
    if node.input(4):
        mask = key_mask(ctx, node.inputs[4], bsz, seq, past_len, total, "key_padding_mask")
    causal = causal_mask(seq, past_len, total) if unidirectional and seq > 1 else None
    biases = []
    if node.input(5):
        biases.append(attention_bias(ctx, node.inputs[5], bsz, heads, seq, total))
    want_qk = _wanted(node, 3)
    out, qk = attend(ctx, qh, k_all, v_all,
                     scale=default_scale(float_attr(node, "scale", 0.0), head_size),
                     biases=biases, mask=mask, exclude=causal,
                     mask_fill=float_attr(node, "mask_filter_value", MASK_FILTER),
                     extra="masked" if want_qk else None)
    present_k = k_all if _wanted(node, 1) else None
    present_v = v_all if _wanted(node, 2) else None
    return [merge_heads(ctx, out), present_k, present_v, qk][:len(node.outputs)]


@onnx_op("DecoderMaskedMultiHeadAttention", since=1, domain="com.microsoft")
def decoder_masked_multi_head_attention(ctx: ImportContext, node: Node) -> Outputs:
    """com.microsoft DecoderMaskedMultiHeadAttention (one decoding step, sequence length 1).
    Self-attention: query/key/value [B, 1, D] (or packed QKV query [B, 1, 2D + Dv]) with
    past_present_share_buffer=1 and past_key/past_value [B, N, M, H] buffers: the new row is
    written at past_sequence_length P (constant: slices and a concat; graph input: a `where`
    over the buffer) and keys 0..P are attended. Cross-attention: key/value [B, N, L, H]
    without past. bias [D + D + Dv] (Q only for cross-attention); mask_index [B, P + 1]
    (0/1, masked keys get mask_filter_value added); attention_bias [B or 1, N or 1, 1, P + 1];
    scale (default 1/sqrt(H)); the qk output (output_qk=1: scaled scores with bias and mask).
    Restrictions: float32/float16; beam_width must be absent or a constant 1
    (cache_indirection is then irrelevant and ignored); self-attention needs
    past_present_share_buffer=1 (as onnxruntime's kernel does); with a past_sequence_length
    computed in the graph, mask_index and attention_bias are not supported (their length
    P + 1 would vary)."""
    b = ctx.builder
    check_arity(node, (1, 11), (1, 4))
    heads = _num_heads(node)
    if node.input(8):
        beams = np.asarray(ctx.const_input(node, 8)).reshape(-1)
        if beams.size != 1 or int(beams[0]) > 1:
            raise UnsupportedAttribute(f"beam_width {beams.tolist()} is not supported (only 1)")
    share = flag_attr(node, "past_present_share_buffer")
    want_qk = flag_attr(node, "output_qk") and _wanted(node, 3)
    query = float_input(ctx, require(node, 0, "query"), "query")
    if query.rank != 3 or query.shape[1] != 1:
        raise InvalidModel(f"query must be [batch, 1, hidden], got {list(query.shape)}")
    bsz = query.shape[0]
    key_name, value_name = node.input(1), node.input(2)
    cross = bool(key_name) and len(ctx.shape(key_name)) == 4
    bias = float_input(ctx, node.inputs[10], "bias") if node.input(10) else None
    if cross:
        if not value_name or node.input(5) or node.input(6):
            raise InvalidModel("cross-attention takes key and value [B, N, L, H] and no past")
        k4 = float_input(ctx, key_name, "key")
        v4 = float_input(ctx, value_name, "value")
        hidden = query.shape[2]
        if hidden % heads or k4.shape[:2] != (bsz, heads) or k4.shape[3] != hidden // heads or (
                v4.rank != 4 or v4.shape != k4.shape):
            raise InvalidModel(f"key {list(k4.shape)} / value {list(v4.shape)} must both be "
                               f"[{bsz}, {heads}, L, {hidden // max(heads, 1)}]")
        size = hidden // heads
        q = query
        if bias is not None:
            if bias.shape[0] != 3 * hidden:
                raise InvalidModel(f"bias of shape {list(bias.shape)} must be [{3 * hidden}]")
            q = b.add(q, b.slice(bias, [0], [hidden]))
        qh = split_heads(ctx, q, heads)
        mask = None
        if node.input(3):
            mask = key_mask(ctx, node.inputs[3], bsz, 1, 0, k4.shape[2], "mask_index")
        if node.input(4):
            raise UnsupportedAttribute("attention_bias with cross-attention is not supported "
                                       "(nor by onnxruntime)")
        out, qk = attend(ctx, qh, k4, v4,
                         scale=default_scale(float_attr(node, "scale", 0.0), size), mask=mask,
                         mask_fill=float_attr(node, "mask_filter_value", MASK_FILTER),
                         extra="masked" if want_qk else None)
        return [merge_heads(ctx, out), None, None, qk][:len(node.outputs)]

    if not share:
        raise UnsupportedAttribute("self-attention needs past_present_share_buffer=1 (as in "
                                   "onnxruntime's kernel)")
    if key_name:
        if not value_name:
            raise InvalidModel("value is required with key")
        q = query
        k = float_input(ctx, key_name, "key")
        v = float_input(ctx, value_name, "value")
        hidden, v_hidden = query.shape[2], v.shape[2]
        if list(k.shape) != [bsz, 1, hidden] or v.rank != 3 or list(v.shape[:2]) != [bsz, 1]:
            raise InvalidModel(f"key {list(k.shape)} / value {list(v.shape)} must be "
                               f"[{bsz}, 1, {hidden}] / [{bsz}, 1, Dv]")
    else:
        if value_name:
            raise InvalidModel("key and value must both be given or both be absent")
        width = query.shape[2]
        if width % 3:
            raise InvalidModel(f"packed QKV width {width} is not 3·hidden")
        hidden = v_hidden = width // 3
        q, k, v = b.split(query, 3, axis=2)
    if hidden % heads or v_hidden != hidden:
        raise InvalidModel(f"hidden sizes {hidden} / {v_hidden} must be equal and divisible "
                           f"by num_heads {heads}")
    size = hidden // heads
    if bias is not None:
        if bias.shape != (3 * hidden,):
            raise InvalidModel(f"bias of shape {list(bias.shape)} must be [{3 * hidden}]")
        qb, kb, vb = b.split(bias, 3, axis=0)
        q, k, v = b.add(q, qb), b.add(k, kb), b.add(v, vb)
    qh, kh, vh = (split_heads(ctx, t, heads) for t in (q, k, v))
    pk_name, pv_name = require(node, 5, "past_key"), require(node, 6, "past_value")
    buf_shape = shape_of(ctx, pk_name, (4,), "past_key")
    if buf_shape[:2] != (bsz, heads) or buf_shape[3] != size or (
            tuple(ctx.shape(pv_name)) != buf_shape):
        raise InvalidModel(f"past_key/past_value must both be [{bsz}, {heads}, "
                           f"max_sequence_length, {size}], got {list(buf_shape)} / "
                           f"{list(ctx.shape(pv_name))}")
    max_len = buf_shape[2]
    past_k, past_v = ctx.operand(pk_name), ctx.operand(pv_name)
    past_len = value(ctx, require(node, 7, "past_sequence_length"))
    if isinstance(past_len, np.ndarray):
        if past_len.size != 1:
            raise InvalidModel("past_sequence_length must hold one element")
        p = int(past_len.reshape(-1)[0])
        if not 0 <= p < max_len:
            raise InvalidModel(f"past_sequence_length {p} is outside [0, {max_len})")

        def write(buf: MLOperand, new: MLOperand) -> tuple[MLOperand, MLOperand]:
            head = [] if p == 0 else [b.slice(buf, [0, 0, 0, 0], [bsz, heads, p, size])]
            attended = new if not head else b.concat([*head, new], 2)
            tail = [] if p + 1 == max_len else [
                b.slice(buf, [0, 0, p + 1, 0], [bsz, heads, max_len - p - 1, size])]
            return (attended if not tail else b.concat([attended, *tail], 2)), attended

        present_k, k_att = write(past_k, kh)
        present_v, v_att = write(past_v, vh)
        total = p + 1
        mask = None
        if node.input(3):
            mask = key_mask(ctx, node.inputs[3], bsz, 1, p, total, "mask_index")
        biases = []
        if node.input(4):
            biases.append(attention_bias(ctx, node.inputs[4], bsz, heads, 1, total))
        allowed = None
    else:
        if node.input(3) or node.input(4):
            raise UnsupportedAttribute("mask_index / attention_bias need a past_sequence_length "
                                       "known at conversion time")
        pos = np.arange(max_len, dtype=np.int32).reshape(1, 1, max_len, 1)
        p_op = b.reshape(operand(ctx, int_value(ctx, node.inputs[7]), "int32"), [1, 1, 1, 1])
        at_p = b.equal(ctx.constant(pos), p_op)
        present_k, present_v = b.where(at_p, kh, past_k), b.where(at_p, vh, past_v)
        k_att, v_att, total, mask, biases = present_k, present_v, max_len, None, []
        allowed = b.lesser_or_equal(ctx.constant(pos.reshape(1, 1, 1, max_len)), p_op)
    out, qk = attend(ctx, qh, k_att, v_att,
                     scale=default_scale(float_attr(node, "scale", 0.0), size),
                     biases=biases, mask=mask, exclude=allowed,
                     mask_fill=float_attr(node, "mask_filter_value", MASK_FILTER),
                     extra="masked" if want_qk else None)
    return [merge_heads(ctx, out), present_k if _wanted(node, 1) else None,
            present_v if _wanted(node, 2) else None, qk][:len(node.outputs)]
