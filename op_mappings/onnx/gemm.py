"""ONNX Gemm -> WebNN gemm (transA/transB -> aTranspose/bTranspose, alpha, beta, optional C).

Restrictions: A and B rank 2, float32/float16; C unidirectionally broadcastable to [M, N].
"""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op


@onnx_op("Gemm", since=7)
def gemm(ctx: ImportContext, node: Node) -> Outputs:
    a, b, c = ctx.required(node, 0), ctx.required(node, 1), ctx.optional(node, 2)
    return [ctx.builder.gemm(a, b, c=c, alpha=node.attrs["alpha"], beta=node.attrs["beta"],
                             a_transpose=bool(node.attrs["transA"]),
                             b_transpose=bool(node.attrs["transB"]))]
