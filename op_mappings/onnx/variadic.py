"""ONNX Sum, Mean, Max, Min (variadic) -> chains of WebNN add / max / min (+ div for Mean).

Restrictions: inputs share one data type and broadcast numpy-style; opsets before 8 (no
broadcasting) are handled the same way. Mean of integers divides with truncation.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op

_METHODS = {"Sum": "add", "Mean": "add", "Max": "max", "Min": "min"}


@onnx_op(("Sum", "Mean", "Max", "Min"), since=6)
def variadic(ctx: ImportContext, node: Node) -> Outputs:
    operands = [ctx.operand(n) for n in node.inputs if n]
    if not operands:
        raise InvalidModel(f"{node.op_type} needs at least one input")
    method = getattr(ctx.builder, _METHODS[node.op_type])
    acc = operands[0]
    for operand in operands[1:]:
        acc = method(acc, operand)
    if node.op_type == "Mean" and len(operands) > 1:
        acc = ctx.builder.div(acc, ctx.constant(np.array(len(operands), acc.data_type)))
    return [acc]
