"""SELECT and SELECT_V2 -> WebNN where (condition as uint8 0/1).

SELECT_V2 broadcasts all three operands; SELECT (v1) takes same-shaped operands or a rank-1
condition selecting whole rows along dim 0 (reshaped to [N, 1, ...]). Quantized values are
selected as stored integers when both branches share the output's parameters.
"""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import data_in, finish


@tflite_op(("SELECT", "SELECT_V2"), since=1)
def select(ctx: ImportContext, node: Node) -> Outputs:
    """where(cond, a, b)."""
    cond = ctx.operand(node.inputs[0])
    (a, bv), raw = data_in(ctx, node, (1, 2))
    if node.op_type == "SELECT" and len(cond.shape) == 1 and len(a.shape) > 1:
        cond = ctx.builder.reshape(cond, [cond.shape[0]] + [1] * (len(a.shape) - 1))
    return [finish(ctx, node, ctx.builder.where(cond, a, bv), raw)]
