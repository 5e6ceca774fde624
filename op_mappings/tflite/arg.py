"""ARG_MAX, ARG_MIN -> argMax / argMin (axis removed, output int32 or int64).

The axis is a constant 1-element tensor; the output type is the output tensor's type
(ArgMaxOptions/ArgMinOptions `output_type`). Quantized inputs are compared as stored
integers (monotonic for a positive scale). Ties: first index in TFLite; WebNN leaves it
implementation-defined (the reference backend picks the first).
"""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import const_ints, norm_axis


@tflite_op(("ARG_MAX", "ARG_MIN"), since=1, const_inputs=(1,))
def arg(ctx: ImportContext, node: Node) -> Outputs:
    """argMax/argMin along a constant axis."""
    x = ctx.operand(node.inputs[0])
    axis = norm_axis(const_ints(ctx, node, 1)[0], len(x.shape))
    out = node.output_infos[0].dtype
    fn = ctx.builder.arg_max if node.op_type == "ARG_MAX" else ctx.builder.arg_min
    return [fn(x, axis, keep_dimensions=False, output_data_type=out)]
