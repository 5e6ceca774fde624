"""ONNX ArgMax, ArgMin -> WebNN argMax / argMin with outputDataType int64.

`select_last_index = 1` (ties resolve to the last index): the input is reversed along the
axis, argMax / argMin picks the first extreme of the reversed tensor (the reference picks the
first index on ties), and the index is mapped back with (n - 1) - index.
Restrictions: WebNN leaves the tie-break implementation-defined; the mapping assumes the
first index (as the reference backend and the WebNN spec's informal algorithm do).
"""

from __future__ import annotations

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import norm_axis
from op_mappings.onnx import onnx_op


@onnx_op(("ArgMax", "ArgMin"), since=1)
def arg(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    axis = norm_axis(node.attrs["axis"], x.rank)
    last = bool(node.attrs.get("select_last_index", 0))
    method = b.arg_max if node.op_type == "ArgMax" else b.arg_min
    if last and x.shape[axis] > 1:
        x = b.reverse(x, axes=[axis])
    y = method(x, axis, keep_dimensions=bool(node.attrs["keepdims"]), output_data_type="int64")
    if last and x.shape[axis] > 1:
        y = b.sub(ctx.constant(np.array(x.shape[axis] - 1, np.int64)), y)
    return [y]
