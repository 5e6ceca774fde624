"""CAST -> WebNN cast; to bool = notEqual(x, 0) (uint8 0/1); bool inputs are already 0/1.

Float -> integer truncates toward zero in LiteRT; WebNN leaves out-of-range values
implementation-defined. Types WebNN lacks (int16, float64, ...) are rejected.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import UnsupportedDataType
from converter.core.ir import Node
from converter.core.webnn.dtypes import carrier_type
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op


@tflite_op("CAST", since=1)
def cast(ctx: ImportContext, node: Node) -> Outputs:
    """cast, or notEqual(x, 0) for a bool target."""
    x = ctx.operand(node.inputs[0])
    target = node.output_infos[0].dtype
    if target == "bool":
        return [ctx.builder.not_equal(x, ctx.builder.constant(np.array(0, x.data_type)))]
    dt = carrier_type(target)
    if dt is None or target == "float64":
        raise UnsupportedDataType(f"CAST to {target} is not supported")
    if dt == x.data_type:
        return [ctx.builder.identity(x)]
    return [ctx.builder.cast(x, dt)]
