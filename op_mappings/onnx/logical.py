"""ONNX Not, And, Or, Xor -> WebNN logicalNot, logicalAnd, logicalOr, logicalXor.

Restrictions: bool values are uint8 0/1 inside the graph.
"""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op

_METHODS = {"And": "logical_and", "Or": "logical_or", "Xor": "logical_xor"}


@onnx_op("Not", since=1)
def not_(ctx: ImportContext, node: Node) -> Outputs:
    return [ctx.builder.logical_not(ctx.operand(node.inputs[0]))]


@onnx_op(("And", "Or", "Xor"), since=7)
def logical(ctx: ImportContext, node: Node) -> Outputs:
    a, b = ctx.inputs(node)
    return [getattr(ctx.builder, _METHODS[node.op_type])(a, b)]
