"""ONNX CumSum -> WebNN cumulativeSum; ONNX CumProd -> a log-step scan of mul.

CumSum: `exclusive` and `reverse` map to exclusive/reversed.
CumProd (opset 26): Hillis-Steele scan: ceil(log2(n)) rounds of
y = y * pad(slice(y), 1) along the axis; exclusive shifts by one (pad 1 at the start);
reverse wraps the scan in reverse. Exact for integers; floats multiply in a different order
than a sequential product.
Restrictions: `axis` must be a constant; WebNN cumulativeSum types (float32/float16,
int32/uint32/int64/uint64).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import finite_scalar
from op_mappings._common.values import norm_axis
from op_mappings.onnx import onnx_op


def _axis(ctx: ImportContext, node: Node, rank: int) -> int:
    return norm_axis(int(finite_scalar(ctx, node, 1, "axis")), rank)


@onnx_op("CumSum", since=11, const_inputs=(1,))
def cum_sum(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    return [ctx.builder.cumulative_sum(x, _axis(ctx, node, x.rank),
                                       exclusive=bool(node.attrs["exclusive"]),
                                       reversed=bool(node.attrs["reverse"]))]


def _shift(ctx: ImportContext, y: Any, axis: int, k: int) -> Any:
    """y shifted by k along axis towards higher indices, filled with 1."""
    b = ctx.builder
    n = y.shape[axis]
    sizes = list(y.shape)
    sizes[axis] = n - k
    part = b.slice(y, [0] * y.rank, sizes)
    begin = [0] * y.rank
    begin[axis] = k
    return b.pad(part, begin, [0] * y.rank, mode="constant", value=1)


@onnx_op("CumProd", since=26, const_inputs=(1,))
def cum_prod(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    axis = _axis(ctx, node, x.rank)
    n = x.shape[axis]
    y = b.reverse(x, axes=[axis]) if node.attrs["reverse"] else x
    if node.attrs["exclusive"]:
        y = _shift(ctx, y, axis, 1) if n > 1 else b.constant(np.ones(y.shape, y.data_type))
    k = 1
    while k < n:
        y = b.mul(y, _shift(ctx, y, axis, k))
        k *= 2
    if node.attrs["reverse"]:
        y = b.reverse(y, axes=[axis])
    return [y if y.kind == "output" else b.identity(y)]
