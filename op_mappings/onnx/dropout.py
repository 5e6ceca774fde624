"""ONNX Dropout (inference) -> no operation: Y aliases the input; the optional mask output is
a constant all-true tensor.

Restrictions: inference only; `training_mode` (opset 12 input) must be absent or a constant
false.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import one_value
from op_mappings.onnx import onnx_op


@onnx_op("Dropout", since=1)
def dropout(ctx: ImportContext, node: Node) -> Outputs:
    name = node.inputs[0]
    training = node.input(2)
    if training and bool(one_value(ctx.const_value(training), "training_mode (input 2)")):
        raise ctx.unsupported("Dropout in training mode is not supported")
    y: Any = ctx.const_value(name) if ctx.is_constant(name) else ctx.operand(name)
    if len(node.outputs) > 1 and node.outputs[1]:
        return [y, np.ones(ctx.shape(name), np.bool_)]
    return [y]
