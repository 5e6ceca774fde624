"""ONNX Selu -> WebNN mul(elu(x, alpha), gamma) (gamma * elu is exactly Selu).

Restrictions: float32/float16 inputs.
"""

from __future__ import annotations

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op


@onnx_op("Selu", since=6)
def selu(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    y = ctx.builder.elu(x, alpha=node.attrs["alpha"])
    return [ctx.builder.mul(y, ctx.constant(np.array(node.attrs["gamma"], x.data_type)))]
