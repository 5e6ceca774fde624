"""LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT on booleans (uint8 0/1 in WebNN)."""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op


@tflite_op(("LOGICAL_AND", "LOGICAL_OR"), since=1)
def logical_binary(ctx: ImportContext, node: Node) -> Outputs:
    """logicalAnd / logicalOr with broadcasting."""
    a, b = ctx.operand(node.inputs[0]), ctx.operand(node.inputs[1])
    fn = ctx.builder.logical_and if node.op_type == "LOGICAL_AND" else ctx.builder.logical_or
    return [fn(a, b)]


@tflite_op("LOGICAL_NOT", since=1)
def logical_not(ctx: ImportContext, node: Node) -> Outputs:
    """logicalNot."""
    return [ctx.builder.logical_not(ctx.operand(node.inputs[0]))]
