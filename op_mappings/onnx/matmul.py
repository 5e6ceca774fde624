"""ONNX MatMul -> WebNN matmul.

numpy promotion of 1-D operands: [K] becomes [1, K] (a) or [K, 1] (b) with a reshape, and the
added dimension is removed from the result.
Restrictions: float32/float16 (WebNN matmul); integer MatMul is not supported.
"""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import demote_vectors, promote_vector


@onnx_op("MatMul", since=1)
def matmul(ctx: ImportContext, node: Node) -> Outputs:
    a, b = ctx.inputs(node)
    bld = ctx.builder
    y = bld.matmul(promote_vector(bld, a, 0), promote_vector(bld, b, 1))
    return [demote_vectors(bld, y, a.rank == 1, b.rank == 1)]
