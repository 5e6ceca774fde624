"""com.microsoft PackedAttention, PackedMultiHeadAttention and RestorePadding (the transformers
optimizer's packing mode, CUDA kernels in onnxruntime) -> attention over all packed tokens with
a same-sequence mask; a scatter and gather.

The T real tokens of B right-padded sequences come packed ([T, hidden]); token t belongs to
sequence seq(t) = #{i in 1..B : cumulative_sequence_length[i] <= t}. Each token attends to
the tokens of its own sequence: one [1, N, T, T] attention whose keys of other sequences drop
out of the softmax (the mask is computed in the graph from cumulative_sequence_length, so the
token counts per sequence are run-time values; only T is fixed).
- PackedAttention: Q, K, V = input [T, D_in] · weights [D_in, 3D] + bias [3D] (or the
  qkv_hidden_sizes split).
- PackedMultiHeadAttention: query, key, value [T, D] (+ bias [3D]) or packed QKV
  query [T, N, 3, H] (key and value absent).
scale defaults to 1/√H. token_offset is not needed without attention_bias.
RestorePadding scatters the packed tokens back to [B, S, hidden]. RemovePadding, whose output
length is the run-time token count, has no static form.
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
    attend,
    check_arity,
    default_scale,
    float_attr,
    float_input,
    int_attr,
    ints_attr,
)

MS = "com.microsoft"


def _same_sequence(ctx: ImportContext, name: str, tokens: int) -> MLOperand:
    """uint8 [1, 1, T, T]: 1 where the two tokens belong to one sequence."""
    b = ctx.builder
    cum = ctx.operand(name)
    if cum.rank != 1 or cum.shape[0] < 2:
        raise InvalidModel(f"cumulative_sequence_length {list(cum.shape)} must be [B + 1]")
    ends = b.slice(b.cast(cum, "int32"), [1], [cum.shape[0] - 1])  # [B]
    pos = ctx.constant(np.arange(tokens, dtype=np.int32).reshape(tokens, 1))
    seq = b.reduce_sum(b.cast(b.greater_or_equal(pos, b.reshape(ends, [1, ends.shape[0]])),
                              "int32"), axes=[1])  # [T]
    same = b.equal(b.reshape(seq, [tokens, 1]), b.reshape(seq, [1, tokens]))
    return b.reshape(same, [1, 1, tokens, tokens])


def _heads(ctx: ImportContext, x: MLOperand, heads: int) -> MLOperand:
    """[T, N·H] -> [1, N, T, H]."""
    b = ctx.builder
    tokens, width = x.shape
    return b.transpose(b.reshape(x, [1, tokens, heads, width // heads]),
                       permutation=[0, 2, 1, 3])


def _attention(ctx: ImportContext, node: Node, q: MLOperand, k: MLOperand, v: MLOperand,
               heads: int, cum_index: int) -> MLOperand:
    b = ctx.builder
    tokens = q.shape[0]
    if q.shape[1] % heads or v.shape[1] % heads:
        raise InvalidModel(f"{node.op_type} hidden sizes {q.shape[1]} / {v.shape[1]} are not "
                           f"divisible by num_heads {heads}")
    size = q.shape[1] // heads
    allowed = _same_sequence(ctx, node.inputs[cum_index], tokens)
    out, _ = attend(ctx, _heads(ctx, q, heads), _heads(ctx, k, heads), _heads(ctx, v, heads),
                    scale=default_scale(float_attr(node, "scale", 0.0), size),
                    exclude=allowed)
    return b.reshape(b.transpose(out, permutation=[0, 2, 1, 3]), [tokens, v.shape[1]])


def _no_bias_input(node: Node, index: int) -> None:
    if node.input(index):
        raise UnsupportedAttribute(f"{node.op_type} attention_bias is not supported")


def _split(ctx: ImportContext, x: MLOperand, sizes: list[int]) -> list[Any]:
    return list(ctx.builder.split(x, sizes, axis=1))


@onnx_op("PackedAttention", since=1, domain=MS)
def packed_attention(ctx: ImportContext, node: Node) -> Outputs:
    """input · weights + bias, then same-sequence attention (see the module docstring).
    Restrictions: float32/float16; no attention_bias."""
    check_arity(node, (5, 6), (1, 1))
    _no_bias_input(node, 5)
    b = ctx.builder
    heads = int_attr(node, "num_heads")
    x = float_input(ctx, node.inputs[0], "input")
    w = float_input(ctx, node.inputs[1], "weights")
    bias = float_input(ctx, node.inputs[2], "bias")
    if x.rank != 2 or w.rank != 2 or w.shape[0] != x.shape[1]:
        raise InvalidModel(f"PackedAttention input {list(x.shape)} and weights "
                           f"{list(w.shape)} must be [T, D_in] and [D_in, 3·D]")
    sizes = ints_attr(node, "qkv_hidden_sizes") or [w.shape[1] // 3] * 3
    if len(sizes) != 3 or sum(sizes) != w.shape[1] or sizes[0] != sizes[1]:
        raise InvalidModel(f"PackedAttention qkv_hidden_sizes {sizes} do not fit weights "
                           f"{list(w.shape)}")
    if list(bias.shape) != [w.shape[1]]:
        raise InvalidModel(f"PackedAttention bias {list(bias.shape)} must be [{w.shape[1]}]")
    qkv = b.add(b.matmul(x, w), bias)
    q, k, v = _split(ctx, qkv, sizes)
    return [_attention(ctx, node, q, k, v, heads, 4)]


@onnx_op("PackedMultiHeadAttention", since=1, domain=MS)
def packed_multi_head_attention(ctx: ImportContext, node: Node) -> Outputs:
    """Same-sequence attention of packed Q, K, V (see the module docstring).
    Restrictions: float32/float16; no attention_bias."""
    check_arity(node, (6, 7), (1, 1))
    _no_bias_input(node, 6)
    b = ctx.builder
    heads = int_attr(node, "num_heads")
    query = float_input(ctx, node.inputs[0], "query")
    if node.input(1):
        if not node.input(2):
            raise InvalidModel("PackedMultiHeadAttention key and value go together")
        q = query
        k, v = (float_input(ctx, node.inputs[i], w) for i, w in ((1, "key"), (2, "value")))
        if q.rank != 2 or k.rank != 2 or v.rank != 2 or len({t.shape[0] for t in (q, k, v)}) != 1 \
                or k.shape[1] != q.shape[1]:
            raise InvalidModel("PackedMultiHeadAttention query, key and value must be "
                               "[T, D], [T, D] and [T, Dv]")
    else:
        if query.rank != 4 or query.shape[1] != heads or query.shape[2] != 3:
            raise InvalidModel(f"PackedMultiHeadAttention packed QKV {list(query.shape)} must "
                               f"be [T, {heads}, 3, H]")
        tokens, _, _, size = query.shape
        parts = b.split(query, 3, axis=2)
        q, k, v = (b.reshape(p, [tokens, heads * size]) for p in parts)
    if node.input(3):
        bias = float_input(ctx, node.inputs[3], "bias")
        d, dv = q.shape[1], v.shape[1]
        if list(bias.shape) != [2 * d + dv]:
            raise InvalidModel(f"PackedMultiHeadAttention bias {list(bias.shape)} must be "
                               f"[{2 * d + dv}]")
        qb, kb, vb = b.split(bias, [d, d, dv], axis=0)
        q, k, v = b.add(q, qb), b.add(k, kb), b.add(v, vb)
    return [_attention(ctx, node, q, k, v, heads, 5)]


@onnx_op("RestorePadding", since=1, domain=MS)
def restore_padding(ctx: ImportContext, node: Node) -> Outputs:
    """The packed tokens [T, hidden] put back at their padded positions (token_offset
    [B, S]: the real positions first, then the padding ones), zeros elsewhere: the inverse
    of token_offset by one scatterElements, then a gather and a where.
    Restrictions: token_offset a permutation of 0..B·S - 1 (as RemovePadding writes it)."""
    check_arity(node, (2, 2), (1, 1))
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    offset = ctx.operand(node.inputs[1])
    if x.rank != 2 or offset.rank != 2 or x.shape[0] > offset.shape[0] * offset.shape[1]:
        raise InvalidModel(f"RestorePadding input {list(x.shape)} and token_offset "
                           f"{list(offset.shape)} must be [T, hidden] and [B, S], T <= B·S")
    bsz, seq = offset.shape
    tokens, hidden = x.shape
    slots = bsz * seq
    flat = b.reshape(b.cast(offset, "int32"), [slots])
    order = ctx.constant(np.arange(slots, dtype=np.int32))
    inverse = b.scatter_elements(ctx.constant(np.zeros(slots, np.int32)), flat, order, axis=0)
    rows = b.gather(x, b.clamp(inverse, min_value=0, max_value=tokens - 1), axis=0)
    real = b.reshape(b.lesser(inverse, ctx.constant(np.asarray(tokens, np.int32))),
                     [slots, 1])
    y = b.where(real, rows, b.constant(np.zeros((), x.data_type)))
    return [b.reshape(y, [bsz, seq, hidden])]
