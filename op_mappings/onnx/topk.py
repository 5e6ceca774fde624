"""ONNX TopK -> a rank-by-comparison decomposition (no WebNN topK op).

With the axis moved last ([..., n]): rank_i = #{j: x_j beats x_i} + #{j < i: x_j == x_i}
(pairwise greater/lesser + equal on [..., n, n], reduceSum), so equal values keep their
index order as ONNX requires; the index of the r-th element is
reduceSum((rank == r) · iota) (exact integer arithmetic, r < k), and the values are
gatherElements(x, indices). `largest` picks greater or lesser; the result is always sorted
(also valid for sorted = 0). Indices are int64 as in ONNX.
Restrictions: `k` must be a constant; the pairwise tensor has n² elements per row (fine for
the usual sizes; memory grows quadratically with the axis length); NaN ordering is not
ONNX's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.errors import InvalidModel
from converter.formats.onnx import Node
from converter.importer import ImportContext
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import norm_axis


def top_k(ctx: ImportContext, x: Any, k: int, axis: int, largest: bool) -> tuple[Any, Any]:
    """(values, int64 indices) of the k best elements along `axis`, sorted."""
    b = ctx.builder
    n = x.shape[axis]
    if not 0 < k <= n:
        raise InvalidModel(f"TopK k={k} outside 1..{n}")
    last = x.rank - 1
    perm = [i for i in range(x.rank) if i != axis] + [axis]
    xt = x if axis == last else b.transpose(x, permutation=perm)
    lead = list(xt.shape[:-1])
    col = b.reshape(xt, [*lead, n, 1])  # x_i
    row = b.reshape(xt, [*lead, 1, n])  # x_j
    beats = (b.greater if largest else b.lesser)(row, col)
    earlier = np.tril(np.ones((n, n), np.uint8), -1)  # [i, j] = j < i
    tie = b.logical_and(b.equal(row, col), ctx.constant(earlier))
    wins = b.add(b.cast(beats, "int32"), b.cast(tie, "int32"))
    rank = b.reshape(b.reduce_sum(wins, axes=[len(lead) + 1]), [*lead, n, 1])
    slots = b.equal(rank, ctx.constant(np.arange(k, dtype=np.int32).reshape(1, k)))
    iota = ctx.constant(np.arange(n, dtype=np.int32).reshape(n, 1))
    idx = b.reduce_sum(b.mul(b.cast(slots, "int32"), iota), axes=[len(lead)])  # [..., k]
    values = b.gather_elements(xt, idx, axis=len(lead))
    indices = b.cast(idx, "int64")
    if axis != last:
        inv = [int(i) for i in np.argsort(perm)]
        values = b.transpose(values, permutation=inv)
        indices = b.transpose(indices, permutation=inv)
    return values, indices


@onnx_op("TopK", since=1)
def topk1(ctx: ImportContext, node: Node) -> list[Any]:
    """TopK-1: `k` attribute; largest, sorted."""
    x = ctx.operand(node.inputs[0])
    return list(top_k(ctx, x, int(node.attrs["k"]), norm_axis(node.attrs["axis"], x.rank),
                      True))


@onnx_op("TopK", since=10, const_inputs=(1,))
def topk10(ctx: ImportContext, node: Node) -> list[Any]:
    """TopK-10+: `k` input (constant); `largest`/`sorted` from 11."""
    x = ctx.operand(node.inputs[0])
    k = int(np.asarray(ctx.const_input(node, 1)).reshape(-1)[0])
    largest = bool(node.attrs.get("largest", 1))
    return list(top_k(ctx, x, k, norm_axis(node.attrs["axis"], x.rank), largest))
