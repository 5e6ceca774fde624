"""ONNX Where -> WebNN where.

Restrictions: the condition is bool (uint8 inside the graph); the three operands broadcast
numpy-style.
"""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op


@onnx_op("Where", since=9)
def where(ctx: ImportContext, node: Node) -> Outputs:
    c, t, f = ctx.inputs(node)
    return [ctx.builder.where(c, t, f)]
