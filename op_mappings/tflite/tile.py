"""TILE (constant multiples) -> tile; BROADCAST_TO (constant shape) -> expand. Stored
integers are used for quantized tensors when parameters match."""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import const_ints, data_in, finish


@tflite_op("TILE", since=1, const_inputs=(1,))
def tile(ctx: ImportContext, node: Node) -> Outputs:
    """tile(x, multiples)."""
    (x,), raw = data_in(ctx, node)
    return [finish(ctx, node, ctx.builder.tile(x, const_ints(ctx, node, 1)), raw)]


@tflite_op("BROADCAST_TO", since=1, const_inputs=(1,))
def broadcast_to(ctx: ImportContext, node: Node) -> Outputs:
    """expand(x, shape)."""
    (x,), raw = data_in(ctx, node)
    return [finish(ctx, node, ctx.builder.expand(x, const_ints(ctx, node, 1)), raw)]
