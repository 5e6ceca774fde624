"""ONNX Trilu -> WebNN triangular (`upper` and the constant `k` input map to upper/diagonal).

Restrictions: `k` must be a constant; rank >= 2 (WebNN).
"""

from __future__ import annotations

from typing import Any

from converter.importer import ImportContext
from converter.ir import Node
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import ints


@onnx_op("Trilu", since=14, const_inputs=(1,))
def trilu(ctx: ImportContext, node: Node) -> list[Any]:
    x = ctx.operand(node.inputs[0])
    k = ctx.const_input(node, 1)
    diagonal = ints(k)[0] if k is not None else 0
    return [ctx.builder.triangular(x, upper=bool(node.attrs["upper"]), diagonal=diagonal)]
