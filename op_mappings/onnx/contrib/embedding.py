"""onnxruntime's embedding fusions (com.microsoft) -> WebNN gather + layerNormalization.

- EmbedLayerNormalization (BERT embeddings): word_embedding[input_ids] +
  position_embedding[position_ids or 0..S-1] (+ segment_embedding[segment_ids]), then
  layerNormalization over the hidden axis with gamma/beta. Outputs: output, mask_index (the
  number of mask entries equal to 1 per batch row, int32 [B]; zeros without a mask, as
  onnxruntime computes it) and embedding_sum (the sum before normalisation).
- QEmbedLayerNormalization (onnxruntime's quantizer): EmbedLayerNormalization of the
  dequantized 8-bit tables (constant tables are dequantized at conversion time).
- GatedRelativePositionBias (WavLM): the relative position bias scaled by a per-head,
  per-token gate computed from the query (see the handler).
- RelativePositionBias (T5): the binned relative-position bias [1, num_heads, L, L]; the
  bucket of every (query, key) pair is computed at conversion time (float32 logarithms, as
  onnxruntime's kernel) and the bias table gathered with it. The table is read the way
  onnxruntime reads it: its [num_buckets, num_heads] data taken as [num_heads, num_buckets]
  ("col-major", see onnxruntime's RelativePositionBias test).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute, UnsupportedDataType
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import const_or_none
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import (
    attr_epsilon,
    attr_int,
    check_arity,
    check_same_type,
    check_shape,
    float_operand,
    to_type,
)
from op_mappings.onnx.contrib._quant_common import per_tensor_params, quantized_input

MS = "com.microsoft"
INDEX_TYPES = ("int32", "int64")


def _ids(ctx: ImportContext, node: Node, index: int, what: str) -> Any:
    x = ctx.operand(node.inputs[index])
    if x.data_type not in INDEX_TYPES:
        raise UnsupportedDataType(f"EmbedLayerNormalization {what} (input {index}) has data "
                                  f"type {x.data_type}; int32 is expected")
    return x


def _table(ctx: ImportContext, node: Node, index: int, what: str, hidden: int | None) -> Any:
    t = float_operand(ctx, node, index, what)
    if t.rank != 2 or (hidden is not None and t.shape[1] != hidden):
        want = "2-D" if hidden is None else f"2-D with {hidden} columns"
        raise InvalidModel(f"EmbedLayerNormalization {what} must be {want}, got shape "
                           f"{list(t.shape)}")
    return t


def _first_rows(ctx: ImportContext, node: Node, index: int, rows: int) -> Any:
    """Rows [0, rows) of the 2-D input `index` (sliced in numpy when it is constant)."""
    value = const_or_none(ctx, node.inputs[index])
    if value is not None:
        return ctx.constant(np.ascontiguousarray(value[:rows]), what="position embeddings")
    t = ctx.operand(node.inputs[index])
    return t if t.shape[0] == rows else ctx.builder.slice(t, [0, 0], [rows, t.shape[1]])


@onnx_op("EmbedLayerNormalization", since=1, domain=MS)
def embed_layer_normalization(ctx: ImportContext, node: Node) -> Outputs:
    """BERT embedding + layer normalisation (see the module docstring).
    Restrictions: float32/float16 tables (the sum and normalisation run in float32); int32
    (or int64) ids of shape [B, S]; segment_ids and segment_embedding both given or both
    omitted; without position_ids S must not exceed the position table's rows;
    out-of-range ids are not detected (WebNN gather clamps or is implementation-defined,
    onnxruntime fails)."""
    check_arity(node, (7, 9), (1, 3), required=(0, 2, 3, 5, 6))
    b = ctx.builder
    ids = _ids(ctx, node, 0, "input_ids")
    if ids.rank != 2:
        raise InvalidModel(f"EmbedLayerNormalization input_ids must be 2-D [batch, sequence], "
                           f"got shape {list(ids.shape)}")
    batch, seq = ids.shape
    word = _table(ctx, node, 2, "word_embedding", None)
    hidden = word.shape[1]
    pos_table = _table(ctx, node, 3, "position_embedding", hidden)
    gamma = float_operand(ctx, node, 5, "gamma")
    beta = float_operand(ctx, node, 6, "beta")
    check_shape(node, gamma, [hidden], "gamma")
    check_shape(node, beta, [hidden], "beta")
    has_seg, has_seg_table = bool(node.input(1)), bool(node.input(4))
    if has_seg != has_seg_table:
        raise InvalidModel("EmbedLayerNormalization needs segment_ids and segment_embedding "
                           "together (one of them is omitted)")
    seg_table = _table(ctx, node, 4, "segment_embedding", hidden) if has_seg else None
    check_same_type(node, [(word, "word_embedding"), (pos_table, "position_embedding"),
                           (seg_table, "segment_embedding"), (gamma, "gamma"),
                           (beta, "beta")])
    eps = attr_epsilon(node, 1e-12)
    attr_int(node, "mask_index_type", 1)
    dt = word.data_type

    def f32(v: Any) -> Any:
        return to_type(ctx, v, "float32")

    s = f32(b.gather(word, ids, axis=0))
    if node.input(8):
        pos_ids = _ids(ctx, node, 8, "position_ids")
        if pos_ids.rank != 2 or pos_ids.shape[1] != seq or pos_ids.shape[0] not in (1, batch):
            raise InvalidModel(f"EmbedLayerNormalization position_ids of shape "
                               f"{list(pos_ids.shape)} must be [1, {seq}] or [{batch}, {seq}]")
        s = b.add(s, f32(b.gather(pos_table, pos_ids, axis=0)))
    else:
        if seq > pos_table.shape[0]:
            raise InvalidModel(f"EmbedLayerNormalization sequence length {seq} exceeds the "
                               f"{pos_table.shape[0]} rows of position_embedding")
        s = b.add(s, b.reshape(f32(_first_rows(ctx, node, 3, seq)), [1, seq, hidden]))
    if seg_table is not None:
        seg_ids = _ids(ctx, node, 1, "segment_ids")
        check_shape(node, seg_ids, [batch, seq], "segment_ids")
        s = b.add(s, f32(b.gather(seg_table, seg_ids, axis=0)))
    y = b.layer_normalization(s, scale=f32(gamma), bias=f32(beta), axes=[2], epsilon=eps)
    outs: list[Any] = [to_type(ctx, y, dt)]
    if len(node.outputs) > 1:
        mask_index = None
        if node.outputs[1]:
            if node.input(7):
                mask = _ids(ctx, node, 7, "mask")
                check_shape(node, mask, [batch, seq], "mask")
                ones = b.equal(mask, b.constant(np.ones((), mask.data_type)))
                mask_index = b.reduce_sum(b.cast(ones, "int32"), axes=[1])
            else:
                mask_index = ctx.constant(np.zeros(batch, np.int32))
        outs.append(mask_index)
    if len(node.outputs) > 2:
        outs.append(to_type(ctx, s, dt) if node.outputs[2] else None)
    return outs


def relative_position_buckets(query: int, key: int, num_buckets: int, max_distance: int,
                              bidirectional: bool) -> np.ndarray:
    """int32 [query, key] bucket of each (row, col) pair, relative position col - row, with
    onnxruntime's float32 arithmetic (T5's _relative_position_bucket)."""
    rel = np.arange(key)[None, :] - np.arange(query)[:, None]
    buckets = np.zeros(rel.shape, np.int64)
    nb = num_buckets
    if bidirectional:
        nb //= 2
        buckets += np.where(rel > 0, nb, 0)
        n = np.abs(rel)
    else:
        n = np.where(rel > 0, 0, -rel)
    max_exact = nb // 2
    ratio = np.maximum(n, 1).astype(np.float32) / np.float32(max_exact)
    scale = np.log(np.float32(max_distance) / np.float32(max_exact))
    large = (np.log(ratio) / scale * np.float32(nb - max_exact)).astype(np.float32)
    large = np.minimum(max_exact + np.trunc(large).astype(np.int64), nb - 1)
    buckets += np.where(n < max_exact, n, large)
    return buckets.astype(np.int32)


@onnx_op("RelativePositionBias", since=1, domain=MS, const_inputs=(1, 2))
def relative_position_bias(ctx: ImportContext, node: Node) -> Outputs:
    """T5 binned relative position bias [1, num_heads, L, L] (see the module docstring).
    Restrictions: float32/float16 bias_table; query_length and key_length must be constants
    and equal (onnxruntime's rule); max_distance must exceed num_buckets/4 (bidirectional) or
    num_buckets/2."""
    check_arity(node, (3, 3))
    table = float_operand(ctx, node, 0, "bias_table")
    if table.rank != 2:
        raise InvalidModel(f"RelativePositionBias bias_table must be 2-D [num_buckets, "
                           f"num_heads], got shape {list(table.shape)}")
    lengths = []
    for i, what in ((1, "query_length"), (2, "key_length")):
        value = np.asarray(ctx.const_input(node, i))
        if value.size != 1 or value.dtype.kind not in "iu" or int(value.reshape(-1)[0]) < 1:
            raise InvalidModel(f"RelativePositionBias {what} must be one positive integer, "
                               f"got {value.tolist()}")
        lengths.append(int(value.reshape(-1)[0]))
    query, key = lengths
    if query != key:
        raise UnsupportedAttribute(f"RelativePositionBias query_length {query} != key_length "
                                   f"{key} (onnxruntime supports self attention only)")
    max_distance = attr_int(node, "max_distance", None)
    bidirectional = attr_int(node, "is_bidirectional", 0)
    if bidirectional not in (0, 1):
        raise InvalidModel(f"RelativePositionBias is_bidirectional must be 0 or 1, got "
                           f"{bidirectional}")
    num_buckets, heads = table.shape
    max_exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
    if max_exact < 1 or max_distance <= max_exact:
        raise InvalidModel(f"RelativePositionBias with {num_buckets} buckets needs max_distance "
                           f"> {max_exact} and at least {4 if bidirectional else 2} buckets, "
                           f"got max_distance {max_distance}")
    buckets = relative_position_buckets(query, key, num_buckets, max_distance,
                                        bool(bidirectional))
    b = ctx.builder
    flat = b.reshape(table, [heads, num_buckets])
    out = b.gather(flat, ctx.constant(buckets), axis=1)
    return [b.reshape(out, [1, heads, query, key])]


# QEmbedLayerNormalization inputs: (quantized table, scale, zero point) of the word,
# position, segment, gamma and beta tables, in EmbedLayerNormalization's input order
_QTABLES = ((2, 8, 13, "word_embedding"), (3, 9, 14, "position_embedding"),
            (4, 10, 15, "segment_embedding"), (5, 11, 16, "gamma"), (6, 12, 17, "beta"))


def _dequantized_table(ctx: ImportContext, node: Node, q: int, s: int, z: int, what: str
                       ) -> Any:
    """(table - zero point) · scale in float32: numpy when all three are constant."""
    for i, kind in ((s, "scale"), (z, "zero point")):
        if int(np.prod(ctx.shape(node.inputs[i]), dtype=np.int64)) != 1:
            raise InvalidModel(f"QEmbedLayerNormalization {what} {kind} (input {i}) must "
                               f"have one element")
    values = [const_or_none(ctx, node.inputs[i]) for i in (q, s, z)]
    if all(v is not None for v in values):
        table, scale, zp = (np.asarray(v) for v in values)
        if table.dtype.name not in ("uint8", "int8") or zp.dtype != table.dtype:
            raise UnsupportedDataType(f"QEmbedLayerNormalization {what} (input {q}) and its "
                                      f"zero point must be one 8-bit type, got {table.dtype} "
                                      f"and {zp.dtype}")
        real = (table.astype(np.float32) - zp.astype(np.float32).reshape(())) \
            * scale.astype(np.float32).reshape(())
        return ctx.constant(np.ascontiguousarray(real, np.float32), what=what)
    x = quantized_input(ctx, node, q, what)
    scale_op, zp_op = per_tensor_params(ctx, node, s, z, x.rank, x.data_type, what)
    return ctx.builder.dequantize_linear(x, scale_op, zp_op)


@onnx_op("QEmbedLayerNormalization", since=1, domain=MS)
def qembed_layer_normalization(ctx: ImportContext, node: Node) -> Outputs:
    """EmbedLayerNormalization of the dequantized tables (word, position, segment, gamma,
    beta: (q - zero point) · scale, computed in numpy when constant). Outputs: layernorm_out
    and mask_index_out, as EmbedLayerNormalization's first two.
    Restrictions: per-tensor 8-bit tables; those of EmbedLayerNormalization (int32 ids
    [B, S]; the segment inputs all given or all omitted)."""
    check_arity(node, (18, 18), (1, 2), required=(0, 2, 3, 5, 6, 8, 9, 11, 12, 13, 14, 16,
                                                  17))
    seg = [bool(node.input(i)) for i in (1, 4, 10, 15)]
    if any(seg) and not all(seg):
        raise InvalidModel("QEmbedLayerNormalization needs segment_ids, segment_embedding and "
                           "its scale and zero point all given or all omitted")
    names: list[str] = []
    try:
        for q, s, z, what in _QTABLES:
            if not node.input(q):
                names.append("")
                continue
            key = f"{node.name}\x00{what}"
            ctx.operands[key] = _dequantized_table(ctx, node, q, s, z, what)
            names.append(key)
        inputs = (node.inputs[0], node.input(1), *names, node.input(7))
        float_node = replace(node, op_type="EmbedLayerNormalization", inputs=inputs)
        return embed_layer_normalization(ctx, float_node)
    finally:
        for key in names:
            ctx.operands.pop(key, None)


@onnx_op("GatedRelativePositionBias", since=1, domain=MS)
def gated_relative_position_bias(ctx: ImportContext, node: Node) -> Outputs:
    """WavLM's gated relative position bias: q = (query_layer + query_bias) as [B, N, S, H];
    (gate_u, gate_r) = sigmoid(Σ halves of (q @ weight + bias)) ([B, N, S, 2]);
    output = (gate_u · (gate_r · eco_a - 1) + 2) · rel_pos ([B, N, S, S]).
    Restrictions: float32/float16; query_layer [B, S, N·H], weight [H, D] with D even,
    rel_pos [1 or B, N, S, S], eco_a [1, N, 1, 1]; no token_offset (packed mode)."""
    check_arity(node, (6, 7), required=(0, 1, 2, 3, 4, 5))
    if node.input(6):
        raise UnsupportedAttribute("GatedRelativePositionBias token_offset (packed mode) is "
                                   "not supported")
    b = ctx.builder
    names = ("query_layer", "query_bias", "rel_pos", "weight", "bias", "eco_a")
    q, qb, rel, w, wb, eco = (float_operand(ctx, node, i, what) for i, what in enumerate(names))
    check_same_type(node, list(zip((q, qb, rel, w, wb, eco), names, strict=True)))
    heads = attr_int(node, "num_heads", None)
    if q.rank != 3 or heads < 1 or q.shape[2] % heads:
        raise InvalidModel(f"GatedRelativePositionBias query_layer {list(q.shape)} must be "
                           f"[B, S, num_heads·H] (num_heads {heads})")
    bsz, seq, hidden = q.shape
    size = hidden // heads
    if w.rank != 2 or w.shape[0] != size or w.shape[1] % 2:
        raise InvalidModel(f"GatedRelativePositionBias weight {list(w.shape)} must be "
                           f"[{size}, D] with D even")
    d = w.shape[1]
    check_shape(node, qb, [hidden], "query_bias")
    check_shape(node, wb, [d], "bias")
    check_shape(node, eco, [1, heads, 1, 1], "eco_a")
    if rel.rank != 4 or list(rel.shape[1:]) != [heads, seq, seq] or rel.shape[0] not in (1, bsz):
        raise InvalidModel(f"GatedRelativePositionBias rel_pos {list(rel.shape)} must be "
                           f"[1 or {bsz}, {heads}, {seq}, {seq}]")
    x = b.transpose(b.reshape(b.add(q, qb), [bsz, seq, heads, size]), permutation=[0, 2, 1, 3])
    g = b.add(b.matmul(x, w), wb)  # [B, N, S, D]
    gates = b.sigmoid(b.reduce_sum(b.reshape(g, [bsz, heads, seq, 2, d // 2]), axes=[4]))
    gate_u = b.slice(gates, [0, 0, 0, 0], [bsz, heads, seq, 1])
    gate_r = b.slice(gates, [0, 0, 0, 1], [bsz, heads, seq, 1])
    one = b.constant(np.ones((), q.data_type))
    two = b.constant(np.full((), 2.0, q.data_type))
    gate = b.add(b.mul(gate_u, b.sub(b.mul(gate_r, eco), one)), two)
    return [b.mul(gate, rel)]
