"""com.microsoft GroupQueryAttention (as written by the onnxruntime-genai model builder) ->
WebNN matmul / softmax / where decomposition.

Shapes are static, so `total_sequence_length` (input 6) must be known at conversion time
(fix the model's free dimensions, or pin the inputs it is computed from); it fixes the
present KV length max(total_sequence_length, past buffer length) and whether the node is a
first prompt (sequence_length == total_sequence_length). `seqlens_k` may be a constant or a
graph input: when it is known, the present KV is assembled with slices and one concat; when
it is computed in the graph (one graph for every decode step over a fixed-size KV buffer),
each present row is selected with `where` from the past, the new keys and zeros.

Q·Kᵀ uses one batched matmul for all heads: the query heads that share a KV head are folded
into its sequence axis ([B, N, S, H] -> [B, N_kv, (N/N_kv)·S, H]), so K and V are never
repeated. Masked keys (causal, local window, beyond seqlens_k + 1) drop out of the softmax.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
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
    const_int_scalar,
    default_scale,
    derived,
    flag_attr,
    float_attr,
    float_input,
    int_attr,
    int_value,
    mask_and,
    merge_heads,
    operand,
    optional_past,
    reject_inputs,
    require,
    reshape,
    rotary_rows,
    rotate,
    shape_of,
    split_heads,
    value,
)
from op_mappings.onnx.contrib._attention_masks import attention_bias


def _text_attr(node: Node, name: str, default: str) -> str:
    raw = node.attrs.get(name, default)
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def _check_unsupported(node: Node) -> None:
    reject_inputs(node, [12, 13, 14, 15], ["k_scale", "v_scale", "q_norm_weight",
                                           "k_norm_weight"],
                  " (quantized KV cache and fused Q/K norms are not supported)")
    for name in ("k_quant_type", "v_quant_type"):
        if _text_attr(node, name, "NONE") != "NONE":
            raise UnsupportedAttribute(f"{name}={_text_attr(node, name, 'NONE')}: quantized "
                                       "KV caches are not supported")
    if int_attr(node, "kv_cache_bit_width", 0):
        raise UnsupportedAttribute("kv_cache_bit_width: quantized KV caches are not supported")
    if flag_attr(node, "sliding_window_cache"):
        raise UnsupportedAttribute("sliding_window_cache=1 is not supported")
    if int_attr(node, "qk_output", 0) or (len(node.outputs) > 3 and node.outputs[3]):
        raise UnsupportedAttribute("the output_qk output (qk_output) is not supported")


class _Placement:
    """Where the rows of the present KV [B, Nk, length, H] come from: rows
    0..past_rows[b] from the past, then the S new rows, then zeros. With `past_rows` known
    (numpy [B]) the present is assembled with slices and a concat; otherwise (an int32
    operand [B]) with two `where`s whose conditions are built once for K and V."""

    def __init__(self, ctx: ImportContext, past_rows: Value, seq: int, length: int,
                 bsz: int) -> None:
        self.ctx, self.past_rows, self.seq, self.length = ctx, past_rows, seq, length
        if isinstance(past_rows, np.ndarray):
            return
        b = ctx.builder
        pos = np.arange(length, dtype=np.int32).reshape(1, 1, length, 1)
        start = reshape(ctx, past_rows, [bsz, 1, 1, 1])
        self.before = operand(ctx, compare(ctx, "lt", pos, start), "uint8")
        self.within = operand(ctx, compare(ctx, "lt", pos, arith(ctx, "add", start, seq)),
                              "uint8")
        self.index: MLOperand | None = None
        if seq > 1:  # batch 1 (onnxruntime's rule for a multi-token step after a prompt)
            self.index = b.clamp(b.sub(ctx.constant(np.arange(length, dtype=np.int32)),
                                       b.reshape(operand(ctx, past_rows, "int32"), [1])),
                                 min_value=0, max_value=seq - 1)

    def present(self, past: MLOperand | None, new: MLOperand) -> MLOperand:
        ctx, b, length = self.ctx, self.ctx.builder, self.length
        if isinstance(self.past_rows, np.ndarray):
            return self._static(past, new)
        shifted = new if self.index is None else b.gather(new, self.index, axis=2)
        tail = b.where(self.within, shifted, ctx.constant(np.zeros((), new.data_type)))
        if past is None:
            return tail
        if past.shape[2] < length:
            past = b.pad(past, [0, 0, 0, 0], [0, 0, length - past.shape[2], 0])
        return b.where(self.before, past, tail)

    def _static(self, past: MLOperand | None, new: MLOperand) -> MLOperand:
        b, seq, length = self.ctx.builder, self.seq, self.length
        bsz, kv_heads, _, size = new.shape
        rows_per_batch = np.asarray(self.past_rows).tolist()
        blocks: dict[int, MLOperand] = {}
        for rows in sorted(set(rows_per_batch)):
            held = 0 if past is None else past.shape[2]
            if rows < 0 or rows + seq > length or rows > held:
                raise InvalidModel(f"seqlens_k gives {rows} past rows, which with {seq} new "
                                   f"rows do not fit the past ({held} rows) or the present "
                                   f"length {length}")
            pieces = []
            if rows and past is not None:
                pieces.append(past if rows == held else b.slice(
                    past, [0, 0, 0, 0], [bsz, kv_heads, rows, size]))
            pieces.append(new)
            block = pieces[0] if len(pieces) == 1 else b.concat(pieces, 2)
            if rows + seq < length:
                block = b.pad(block, [0, 0, 0, 0], [0, 0, length - rows - seq, 0])
            blocks[rows] = block
        if len(blocks) == 1:
            return next(iter(blocks.values()))
        # ragged batch: each batch row from its own block
        return b.concat([b.slice(blocks[rows], [i, 0, 0, 0], [1, kv_heads, length, size])
                         for i, rows in enumerate(rows_per_batch)], 0)


def _allowed(ctx: ImportContext, past_rows: Value, total_b: Value, bsz: int, seq: int,
             keys: int, causal: bool, window: int) -> Mask | None:
    """Which of the `keys` keys each query row attends to: those before the row's end
    (causal: min(past_rows + row + 1, seqlens + 1); else seqlens + 1) and, with a local
    window, not more than `window` before it."""
    key_pos = np.arange(keys, dtype=np.int32).reshape(1, 1, 1, keys)
    if causal:
        rows = np.arange(1, seq + 1, dtype=np.int32).reshape(1, 1, seq, 1)
        ends = arith(ctx, "min", arith(ctx, "add", reshape(ctx, past_rows, [bsz, 1, 1, 1]),
                                       rows), total_b)
    else:
        ends = total_b
    allowed: Mask | None = compare(ctx, "lt", key_pos, ends)
    if window > 0:
        allowed = mask_and(ctx, allowed,
                           compare(ctx, "ge", key_pos, arith(ctx, "sub", ends, window)))
    return allowed


BlockMask = Callable[[Value, int, int, int], Mask]
"""An extra allowed-mask (SparseAttention's block layout): (past_rows [B], batch, query
rows, keys) -> a mask broadcastable to [B, N, S, keys]."""


@onnx_op("GroupQueryAttention", since=1, domain="com.microsoft", const_inputs=(6,))
def group_query_attention(ctx: ImportContext, node: Node) -> Outputs:
    """com.microsoft GroupQueryAttention: query [B, S, N·H] with key/value [B, S, N_kv·H],
    or packed QKV [B, S, (N + 2·N_kv)·H] (key and value absent); past/present KV in BNSH
    ([B, N_kv, P, H], P may be a fixed buffer length); seqlens_k [B] (total length - 1 per
    batch row; constant or graph input); total_sequence_length (must be known at conversion
    time: it fixes the present length max(total, P) and prompt vs decode); do_rotary with
    cos_cache/sin_cache [max_position, rotary_dim/2] (partial rotation when rotary_dim < H),
    rotary_interleaved, position_ids; causal (default 1), local_window_size, softcap, scale
    (default 1/sqrt(H)), smooth_softmax and head_sink (an extra logit per head),
    attention_bias [B or 1, N or 1, S, total]. A first prompt (S == total) ignores the past;
    a decode step (S == 1) writes the new row at seqlens_k[b] and attends to keys
    0..seqlens_k[b]. Restrictions: float32/float16; no quantized KV cache (k_scale,
    v_scale, *_quant_type, kv_cache_bit_width), no q/k_norm_weight, no
    sliding_window_cache, no output_qk; a multi-token step after a prompt needs batch 1
    (as in onnxruntime)."""
    return grouped_query_attention(ctx, node)


def grouped_query_attention(ctx: ImportContext, node: Node,
                            block_mask: BlockMask | None = None) -> Outputs:
    """GroupQueryAttention (see its handler), with `block_mask` and-ed into the keys each
    query row may attend to."""
    b = ctx.builder
    check_arity(node, (7, 16), (1, 4))
    _check_unsupported(node)
    heads, kv_heads = int_attr(node, "num_heads"), int_attr(node, "kv_num_heads")
    if heads <= 0 or kv_heads <= 0 or heads % kv_heads:
        raise InvalidModel(f"num_heads ({heads}) must be a positive multiple of kv_num_heads "
                           f"({kv_heads})")
    causal = flag_attr(node, "causal", 1)
    window = int_attr(node, "local_window_size", -1)
    if window == 0 or window < -1 or (window > 0 and not causal):
        raise InvalidModel(f"local_window_size must be -1 or positive (and needs causal=1), "
                           f"got {window}")
    softcap = float_attr(node, "softcap", 0.0)
    if softcap < 0:
        raise InvalidModel(f"softcap must not be negative, got {softcap}")
    do_rotary = flag_attr(node, "do_rotary")
    interleaved = flag_attr(node, "rotary_interleaved")
    smooth = int_attr(node, "smooth_softmax", 0) == 1

    query = float_input(ctx, require(node, 0, "query"), "query")
    if query.rank != 3:
        raise InvalidModel(f"query must have rank 3, got {list(query.shape)}")
    bsz, seq, q_width = query.shape
    packed = not node.input(1)
    if packed:
        if node.input(2):
            raise InvalidModel("key and value must both be given or both be absent")
        if q_width % (heads + 2 * kv_heads):
            raise InvalidModel(f"packed QKV width {q_width} is not (num_heads + "
                               f"2·kv_num_heads)·head_size")
        size = q_width // (heads + 2 * kv_heads)
        q, k, v = b.split(query, [heads * size, kv_heads * size, kv_heads * size], axis=2)
    else:
        if q_width % heads:
            raise InvalidModel(f"query hidden size {q_width} is not divisible by num_heads "
                               f"{heads}")
        size = q_width // heads
        q = query
        if not node.input(2):
            raise InvalidModel("key and value must both be given or both be absent")
        k = float_input(ctx, node.inputs[1], "key")
        v = float_input(ctx, node.inputs[2], "value")
        for what, t in (("key", k), ("value", v)):
            if list(t.shape) != [bsz, seq, kv_heads * size]:
                raise InvalidModel(f"{what} of shape {list(t.shape)} must be "
                                   f"[{bsz}, {seq}, {kv_heads * size}] (kv_num_heads·head_size)")

    pk_name, pv_name = node.input(3), node.input(4)
    if bool(pk_name) != bool(pv_name):
        raise InvalidModel("past_key and past_value must be given together")
    buffer = 0
    if pk_name:
        pk_shape = shape_of(ctx, pk_name, (4,), "past_key")
        if shape_of(ctx, pv_name, (4,), "past_value") != pk_shape or (
                pk_shape[:2] != (bsz, kv_heads) or pk_shape[3] != size):
            raise InvalidModel(f"past_key/past_value must both be [{bsz}, {kv_heads}, "
                               f"past_length, {size}], got {list(pk_shape)} / "
                               f"{list(ctx.shape(pv_name))}")
        buffer = pk_shape[2]
    past_k, past_v = optional_past(ctx, pk_name, 2), optional_past(ctx, pv_name, 2)

    if shape_of(ctx, require(node, 5, "seqlens_k"), (1,), "seqlens_k") != (bsz,):
        raise InvalidModel(f"seqlens_k must be [{bsz}]")
    seqlens = int_value(ctx, node.inputs[5])
    total = const_int_scalar(ctx, node, 6, "total_sequence_length")
    if total < seq:
        raise InvalidModel(f"total_sequence_length {total} is smaller than the sequence "
                           f"length {seq}")
    first_prompt = seq == total
    if not first_prompt and seq > 1 and bsz != 1:
        raise InvalidModel("a multi-token step after the prompt needs batch size 1")
    length = max(total, buffer)
    if isinstance(seqlens, np.ndarray) and (seqlens.min() < 0 or seqlens.max() >= length):
        raise InvalidModel(f"seqlens_k {seqlens.tolist()} is outside [0, {length})")
    # what follows from seqlens_k, the positions and the caches alone is built once and
    # shared by every layer reading the same ones (`derived`)
    total_b = derived(ctx, "gqa_total", (seqlens,), (bsz,),
                      lambda: reshape(ctx, arith(ctx, "add", seqlens, 1), [bsz, 1, 1, 1]))
    # rows of past KV kept before the new ones (also the causal offset)
    past_rows: Value = (np.zeros(bsz, np.int32) if first_prompt or past_k is None
                        else derived(ctx, "gqa_past_rows", (seqlens,), (seq,),
                                     lambda: arith(ctx, "sub", seqlens, seq - 1)))

    qh, kh, vh = (split_heads(ctx, q, heads), split_heads(ctx, k, kv_heads),
                  split_heads(ctx, v, kv_heads))
    if do_rotary:
        cos_name, sin_name = require(node, 7, "cos_cache"), require(node, 8, "sin_cache")
        c_shape = shape_of(ctx, cos_name, (2,), "cos_cache")
        if shape_of(ctx, sin_name, (2,), "sin_cache") != c_shape:
            raise InvalidModel("cos_cache and sin_cache must have the same shape")
        rotary_dim = 2 * c_shape[1]
        if rotary_dim > size or rotary_dim == 0:
            raise InvalidModel(f"cos_cache of shape {list(c_shape)} does not fit head size "
                               f"{size}")
        steps = np.arange(seq, dtype=np.int32).reshape(1, seq)
        positions: Value
        if node.input(9):
            ids = int_value(ctx, node.inputs[9])
            if first_prompt:  # onnxruntime reads only the first element then
                first = (ids.reshape(-1)[:1] if isinstance(ids, np.ndarray)
                         else b.slice(b.reshape(ids, [int(np.prod(ids.shape))]), [0], [1]))
                positions = arith(ctx, "add", reshape(ctx, first, [1, 1]), steps)
            else:
                if list(ctx.shape(node.inputs[9])) != [bsz, seq]:
                    raise InvalidModel(f"position_ids must be [{bsz}, {seq}]")
                positions = ids
        elif first_prompt:
            positions = steps
        else:
            positions = derived(ctx, "gqa_positions", (seqlens,), (seq, bsz), lambda: arith(
                ctx, "add", reshape(ctx, arith(ctx, "sub", seqlens, seq - 1), [bsz, 1]),
                steps))
        cos, sin = value(ctx, cos_name), value(ctx, sin_name)
        tables = rotary_rows(ctx, cos, sin, positions, size, interleaved)
        qh, kh = (rotate(ctx, t, cos, sin, positions, heads=n, rotary_dim=rotary_dim,
                         interleaved=interleaved, rows=tables)
                  for t, n in ((qh, heads), (kh, kv_heads)))

    placement = derived(ctx, "gqa_placement", (past_rows,), (seq, length, bsz),
                        lambda: _Placement(ctx, past_rows, seq, length, bsz))
    present_k, present_v = placement.present(past_k, kh), placement.present(past_v, vh)
    if first_prompt:
        k_att, v_att, keys = kh, vh, seq
    else:
        keys = total
        k_att, v_att = present_k, present_v
        if length > total:
            k_att, v_att = (b.slice(t, [0, 0, 0, 0], [bsz, kv_heads, total, size])
                            for t in (present_k, present_v))

    allowed = derived(ctx, "gqa_allowed", (past_rows, total_b), (bsz, seq, keys, causal, window),
                      lambda: _allowed(ctx, past_rows, total_b, bsz, seq, keys, causal, window))
    if block_mask is not None:
        allowed = mask_and(ctx, allowed, block_mask(past_rows, bsz, seq, keys))
    biases = []
    if node.input(10):
        biases.append(attention_bias(ctx, node.inputs[10], bsz, heads, seq, keys))
    sink: Value | None = None
    if node.input(11):
        if shape_of(ctx, node.inputs[11], (1,), "head_sink") != (heads,):
            raise InvalidModel(f"head_sink must be [{heads}]")
        sink = value(ctx, node.inputs[11])
    elif smooth:
        sink = np.zeros(heads, np.float32)
    out, _ = attend(ctx, qh, k_att, v_att,
                    scale=default_scale(float_attr(node, "scale", 0.0), size),
                    biases=biases, exclude=allowed, softcap=softcap, sink=sink)
    return [merge_heads(ctx, out), present_k, present_v][:len(node.outputs)]
