"""ONNX ArgMax, ArgMin -> WebNN argMax / argMin with outputDataType int64.

Restrictions: `select_last_index = 1` is not supported (WebNN ties are implementation-defined;
the reference picks the first).
"""

from __future__ import annotations

from typing import Any

from converter.formats.onnx import Node
from converter.importer import ImportContext
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import norm_axis


@onnx_op(("ArgMax", "ArgMin"), since=1)
def arg(ctx: ImportContext, node: Node) -> list[Any]:
    if node.attrs.get("select_last_index", 0):
        raise ctx.unsupported("select_last_index = 1 is not supported")
    x = ctx.operand(node.inputs[0])
    method = ctx.builder.arg_max if node.op_type == "ArgMax" else ctx.builder.arg_min
    return [method(x, norm_axis(node.attrs["axis"], x.rank),
                   keep_dimensions=bool(node.attrs["keepdims"]), output_data_type="int64")]
