"""ONNX Mish -> WebNN mul(x, tanh(softplus(x))).

Restrictions: float32/float16 inputs.
"""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op


@onnx_op("Mish", since=18)
def mish(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    b = ctx.builder
    return [b.mul(x, b.tanh(b.softplus(x)))]
