"""ONNX Identity -> no operation (the output aliases the input; an `identity` is emitted only
where WebNN needs one, e.g. when a graph output is a graph input or constant).

Restrictions: tensors only (no sequences or optionals).
"""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op


@onnx_op("Identity", since=1)
def identity(ctx: ImportContext, node: Node) -> Outputs:
    name = node.inputs[0]
    if ctx.is_constant(name):
        return [ctx.const_value(name)]
    return [ctx.operand(name)]
