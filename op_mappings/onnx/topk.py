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

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.core.webnn import decompose as dc
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import finite_scalar
from op_mappings._common.values import norm_axis
from op_mappings.onnx import onnx_op


def top_k(ctx: ImportContext, x: Any, k: int, axis: int, largest: bool) -> tuple[Any, Any]:
    """(values, int64 indices) of the k best elements along `axis`, sorted
    (`converter.core.webnn.decompose.top_k`)."""
    n = x.shape[axis]
    if not 0 < k <= n:
        raise InvalidModel(f"TopK k={k} outside 1..{n}")
    values, idx = dc.top_k(ctx.builder, x, k, axis, largest)
    return values, ctx.builder.cast(idx, "int64")


@onnx_op("TopK", since=1)
def topk1(ctx: ImportContext, node: Node) -> Outputs:
    """TopK-1: `k` attribute; largest, sorted."""
    x = ctx.operand(node.inputs[0])
    return list(top_k(ctx, x, int(node.attrs["k"]), norm_axis(node.attrs["axis"], x.rank),
                      True))


@onnx_op("TopK", since=10, const_inputs=(1,))
def topk10(ctx: ImportContext, node: Node) -> Outputs:
    """TopK-10+: `k` input (constant); `largest`/`sorted` from 11."""
    x = ctx.operand(node.inputs[0])
    k = int(finite_scalar(ctx, node, 1, "k"))
    largest = bool(node.attrs.get("largest", 1))
    return list(top_k(ctx, x, k, norm_axis(node.attrs["axis"], x.rank), largest))
