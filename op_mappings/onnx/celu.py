"""ONNX Celu -> WebNN alpha * elu(x / alpha) (just elu(x) when alpha is 1).

celu(x) = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) = alpha * elu(x / alpha, 1).
Restrictions: float32/float16 inputs; alpha must not be 0.
"""

from __future__ import annotations

import numpy as np

from converter.core.ir import Node
from converter.core.webnn.dtypes import FLOAT_TYPES
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import attr_in_range, check_dtype
from op_mappings.onnx import onnx_op


@onnx_op("Celu", since=12)
def celu(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    check_dtype(x, FLOAT_TYPES, "input 0")
    alpha = float(attr_in_range(node, "alpha"))
    if alpha == 0:
        raise ctx.unsupported("Celu with alpha = 0 is undefined")
    b = ctx.builder
    if alpha == 1.0:
        return [b.elu(x)]
    a = ctx.constant(np.array(alpha, x.data_type))
    return [b.mul(b.elu(b.div(x, a)), a)]
