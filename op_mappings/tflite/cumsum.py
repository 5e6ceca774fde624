"""CUMSUM (constant axis input; exclusive, reverse options) -> cumulativeSum."""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import const_ints, fin, fout, norm_axis


@tflite_op("CUMSUM", since=1, const_inputs=(1,))
def cumsum(ctx: ImportContext, node: Node) -> Outputs:
    """cumulativeSum(x, axis, {exclusive, reversed})."""
    x = fin(ctx, node, 0)
    assert x is not None
    axis = norm_axis(const_ints(ctx, node, 1)[0], len(x.shape))
    y = ctx.builder.cumulative_sum(x, axis, exclusive=bool(node.attrs["exclusive"]),
                                   reversed=bool(node.attrs["reverse"]))
    return [fout(ctx, node, 0, y)]
