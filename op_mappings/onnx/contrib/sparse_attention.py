"""com.microsoft SparseAttention (Phi-3-small's block-sparse attention, written by the
onnxruntime-genai model builder) -> the GroupQueryAttention mapping with the block layout
and-ed into its causal mask.

SparseAttention is GroupQueryAttention over a shared KV buffer (past_key/past_value
[B, N_kv, max_cache, H], present of the same shape) where query row at absolute position p
may attend key j only when j <= p and the block layout of its head allows block
(p // sparse_block_size, j // sparse_block_size). The layouts are given in CSR form
(block_row_indices [L, blocks + 1], block_col_indices [L, nnz], -1 padded) and head h uses
layout h mod L. key_total_sequence_lengths [B] is GroupQueryAttention's seqlens_k + 1; the
inputs map onto GroupQueryAttention's (query, key, value, past, seqlens_k,
total_sequence_length, cos_cache, sin_cache) and do_rotary / rotary_interleaved / scale are
passed on. The layout is expanded at conversion time to a [N, P, P] mask (P = blocks ·
block size); the rows of the query positions are selected with numpy when the past length is
known, else gathered in the graph. Batch rows of different key_total_sequence_lengths follow
the definition (each row's past is its own length - S); onnxruntime 1.31.1's CPU kernel gives
other results for the shorter rows, so only equal lengths are checked against it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import const_or_none
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._attention_common import Mask, Value, check_arity, int_attr
from op_mappings.onnx.contrib.group_query_attention import grouped_query_attention

MS = "com.microsoft"


def dense_layouts(rows: np.ndarray, cols: np.ndarray, block: int) -> np.ndarray:
    """bool [L, blocks·block, blocks·block]: the CSR block layouts expanded to positions. As
    onnxruntime's kernel reads them, a layout with as many blocks as the lower triangle, and
    a block row r with r + 1 blocks, is dense (only the causal mask applies there)."""
    layouts, width = rows.shape[0], rows.shape[1] - 1
    dense = np.zeros((layouts, width, width), bool)
    for lay in range(layouts):
        if int(rows[lay, -1]) >= width * (width + 1) // 2:
            dense[lay] = True
            continue
        for r in range(width):
            lo, hi = int(rows[lay, r]), int(rows[lay, r + 1])
            if not 0 <= lo <= hi <= cols.shape[1]:
                raise InvalidModel(f"SparseAttention block_row_indices {rows[lay].tolist()} "
                                   f"are not a CSR row index into {cols.shape[1]} columns")
            picked = cols[lay, lo:hi]
            picked = picked[picked >= 0]
            if picked.size and picked.max() >= width:
                raise InvalidModel(f"SparseAttention block_col_indices hold block {picked.max()}"
                                   f" outside the {width}-block layout")
            dense[lay, r, picked if hi - lo != r + 1 else slice(None)] = True
    return np.repeat(np.repeat(dense, block, axis=1), block, axis=2)


@onnx_op("SparseAttention", since=1, domain=MS, const_inputs=(5, 6, 7))
def sparse_attention(ctx: ImportContext, node: Node) -> Outputs:
    """GroupQueryAttention with a block-sparse causal mask (see the module docstring).
    Restrictions: those of GroupQueryAttention; block_row_indices, block_col_indices and
    total_sequence_length constant; the layout covers every key position."""
    check_arity(node, (9, 11), (1, 3))
    heads = int_attr(node, "num_heads")
    block = int_attr(node, "sparse_block_size")
    if block < 1:
        raise InvalidModel(f"SparseAttention sparse_block_size must be positive, got {block}")
    rows = np.asarray(ctx.const_input(node, 5)).astype(np.int64)
    cols = np.asarray(ctx.const_input(node, 6)).astype(np.int64)
    if rows.ndim != 2 or cols.ndim != 2 or rows.shape[0] != cols.shape[0] or \
            rows.shape[1] < 2:
        raise InvalidModel(f"SparseAttention block_row_indices {list(rows.shape)} and "
                           f"block_col_indices {list(cols.shape)} must be [L, blocks + 1] and "
                           "[L, nnz]")
    dense = dense_layouts(rows, cols, block)
    per_head = dense[np.arange(heads) % dense.shape[0]]  # [N, P, P]
    positions = per_head.shape[1]

    def block_mask(past_rows: Value, bsz: int, seq: int, keys: int) -> Mask:
        if keys > positions:
            raise InvalidModel(f"SparseAttention layout covers {positions} positions, the "
                               f"keys reach {keys}")
        table = per_head[:, :, :keys]
        if isinstance(past_rows, np.ndarray):
            qpos = past_rows.reshape(bsz, 1) + np.arange(seq).reshape(1, seq)
            if qpos.max() >= positions:
                raise InvalidModel(f"SparseAttention query position {int(qpos.max())} is "
                                   f"outside the {positions}-position layout")
            return np.transpose(table[:, qpos], (1, 0, 2, 3))  # [B, N, S, keys]
        b = ctx.builder
        start = b.reshape(b.cast(past_rows, "int32"), [bsz, 1])
        rows_op = b.add(start, ctx.constant(np.arange(seq, dtype=np.int32).reshape(1, seq)))
        rows_op = b.clamp(rows_op, min_value=0, max_value=positions - 1)
        picked = b.gather(ctx.constant(table.astype(np.uint8)),
                          b.reshape(rows_op, [bsz * seq]), axis=1)  # [N, B·S, keys]
        return b.transpose(b.reshape(picked, [heads, bsz, seq, keys]),
                           permutation=[1, 0, 2, 3])

    lengths_name = node.inputs[8]
    seqlens_name = f"{node.name}\x00seqlens_k"
    lengths = const_or_none(ctx, lengths_name)
    added: dict[str, Any] = ctx.consts if lengths is not None else ctx.operands
    if lengths is not None:
        added[seqlens_name] = (np.asarray(lengths).astype(np.int64) - 1).astype(lengths.dtype)
    else:
        lengths_op = ctx.operand(lengths_name)
        added[seqlens_name] = ctx.builder.sub(
            lengths_op, ctx.builder.constant(np.ones((), lengths_op.data_type)))
    try:
        gqa = replace(node, op_type="GroupQueryAttention",
                      inputs=(*node.inputs[:5], seqlens_name, node.inputs[7], node.input(9),
                              node.input(10)),
                      attrs={k: v for k, v in node.attrs.items() if k != "sparse_block_size"})
        return grouped_query_attention(ctx, gqa, block_mask)
    finally:
        del added[seqlens_name]
