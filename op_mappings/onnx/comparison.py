"""ONNX Equal, Greater, Less, GreaterOrEqual, LessOrEqual -> WebNN equal, greater, lesser,
greaterOrEqual, lesserOrEqual.

Restrictions: results are uint8 0/1 inside the graph (bool at the graph boundary); string
inputs are not supported.
"""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op

_METHODS = {"Equal": "equal", "Greater": "greater", "Less": "lesser",
            "GreaterOrEqual": "greater_or_equal", "LessOrEqual": "lesser_or_equal"}


@onnx_op(("Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"), since=7)
def comparison(ctx: ImportContext, node: Node) -> Outputs:
    a, b = ctx.inputs(node)
    return [getattr(ctx.builder, _METHODS[node.op_type])(a, b)]
