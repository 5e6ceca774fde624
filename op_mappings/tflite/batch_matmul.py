"""BATCH_MATMUL (adj_x, adj_y) -> matmul with the last two dims of a / b swapped first;
batch dims broadcast numpy-style. Quantized operands dequantize."""

from __future__ import annotations

from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import fin, fout


def _swap(ctx: ImportContext, x: MLOperand) -> MLOperand:
    r = len(x.shape)
    perm = list(range(r - 2)) + [r - 1, r - 2]
    return ctx.builder.transpose(x, permutation=perm)


@tflite_op("BATCH_MATMUL", since=1)
def batch_matmul(ctx: ImportContext, node: Node) -> Outputs:
    """matmul(adj_x ? aᵀ : a, adj_y ? bᵀ : b)."""
    a, b = fin(ctx, node, 0), fin(ctx, node, 1)
    assert a is not None and b is not None
    if node.attrs["adj_x"]:
        a = _swap(ctx, a)
    if node.attrs["adj_y"]:
        b = _swap(ctx, b)
    return [fout(ctx, node, 0, ctx.builder.matmul(a, b))]
