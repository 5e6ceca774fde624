"""ONNX MatMul -> WebNN matmul.

numpy promotion of 1-D operands: [K] becomes [1, K] (a) or [K, 1] (b) with a reshape, and the
added dimension is removed from the result.
Restrictions: float32/float16 (WebNN matmul); integer MatMul is not supported.
"""

from __future__ import annotations

from typing import Any

from converter.core.ir import Node
from converter.importer import ImportContext
from op_mappings.onnx import onnx_op


@onnx_op("MatMul", since=1)
def matmul(ctx: ImportContext, node: Node) -> list[Any]:
    a, b = ctx.inputs(node)
    bld = ctx.builder
    a1, b1 = a.rank == 1, b.rank == 1
    if a1:
        a = bld.reshape(a, [1, a.shape[0]])
    if b1:
        b = bld.reshape(b, [b.shape[0], 1])
    y = bld.matmul(a, b)
    if a1 or b1:
        shape = list(y.shape)
        if b1:
            shape.pop(-1)
        if a1:
            shape.pop(-2 if not b1 else -1)
        y = bld.reshape(y, shape)
    return [y]
