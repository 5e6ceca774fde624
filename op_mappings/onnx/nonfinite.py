"""ONNX IsNaN, IsInf -> WebNN isNaN, isInfinite.

IsInf's `detect_positive` / `detect_negative` combine isInfinite with greater/lesser(x, 0)
(logicalAnd); with both off the result is a constant all-false tensor.
Restrictions: float32/float16 inputs only (WebNN isNaN/isInfinite).
"""

from __future__ import annotations

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op


@onnx_op("IsNaN", since=9)
def is_nan(ctx: ImportContext, node: Node) -> Outputs:
    return [ctx.builder.is_nan(ctx.operand(node.inputs[0]))]


@onnx_op("IsInf", since=10)
def is_inf(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    pos, neg = bool(node.attrs["detect_positive"]), bool(node.attrs["detect_negative"])
    b = ctx.builder
    if not pos and not neg:
        return [np.zeros(x.shape, np.bool_)]
    inf = b.is_infinite(x)
    if pos and neg:
        return [inf]
    zero = ctx.constant(np.array(0, x.data_type))
    sign = b.greater(x, zero) if pos else b.lesser(x, zero)
    return [b.logical_and(inf, sign)]
