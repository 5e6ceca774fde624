"""ADD_N -> a chain of adds (quantized inputs dequantized)."""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import fin_required, fout


@tflite_op("ADD_N", since=1)
def add_n(ctx: ImportContext, node: Node) -> Outputs:
    """Sum of all inputs."""
    xs = [fin_required(ctx, node, i) for i in range(len(node.inputs))]
    y = xs[0]
    for x in xs[1:]:
        y = ctx.builder.add(y, x)
    if len(xs) == 1:
        y = ctx.builder.identity(y)
    return [fout(ctx, node, 0, y)]
