"""ONNX Trilu -> WebNN triangular (`upper` and the constant `k` input map to upper/diagonal).

Restrictions: `k` must be a constant; rank >= 2 (WebNN).
"""

from __future__ import annotations

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import finite_scalar
from op_mappings.onnx import onnx_op


@onnx_op("Trilu", since=14, const_inputs=(1,))
def trilu(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    if x.rank < 2:
        raise InvalidModel(f"input 0 has rank {x.rank}, Trilu needs 2 or more")
    diagonal = int(finite_scalar(ctx, node, 1, "k")) if node.input(1) else 0
    return [ctx.builder.triangular(x, upper=bool(node.attrs["upper"]), diagonal=diagonal)]
