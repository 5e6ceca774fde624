"""ONNX Add, Sub, Mul, Div, Pow -> WebNN add, sub, mul, div, pow.

Restrictions: operands broadcast numpy-style (WebNN broadcasts bidirectionally, a superset);
integer Div truncates toward zero in both; integer division by zero is unspecified. Pow's
exponent may have another type than the base in ONNX: it is cast to the base's type. Opsets
before 7 (the `broadcast`/`axis` attributes) are not supported.
"""

from __future__ import annotations

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op

_METHODS = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div"}


@onnx_op(("Add", "Sub", "Mul", "Div"), since=7)
def binary(ctx: ImportContext, node: Node) -> Outputs:
    a, b = ctx.inputs(node)
    return [getattr(ctx.builder, _METHODS[node.op_type])(a, b)]


@onnx_op("Pow", since=7)
def pow_(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    y_name = node.inputs[1]
    if ctx.dtype(y_name) == x.data_type:
        y = ctx.operand(y_name)
    elif ctx.is_constant(y_name):
        y = ctx.constant(np.asarray(ctx.const_value(y_name)).astype(x.data_type))
    else:
        y = ctx.builder.cast(ctx.operand(y_name), x.data_type)
    return [ctx.builder.pow(x, y)]
