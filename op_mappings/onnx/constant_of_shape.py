"""ONNX ConstantOfShape -> a constant (the shape input must be constant).

The fill value is the `value` attribute (a one-element tensor; float32 0 when absent, as the
ONNX spec says).
Restrictions: the shape must be constant; zero-size results cannot enter the graph.
"""

from __future__ import annotations

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import one_value, static_shape
from op_mappings.onnx import onnx_op


@onnx_op("ConstantOfShape", since=9, const_inputs=(0,))
def constant_of_shape(ctx: ImportContext, node: Node) -> Outputs:
    value = node.attrs.get("value")
    fill = np.zeros((), np.float32) if value is None else one_value(value, "attribute 'value'")
    shape = static_shape(ctx, node, 0)
    ctx.check_constant(shape, fill.dtype)
    return [np.full(shape, fill, dtype=fill.dtype)]
