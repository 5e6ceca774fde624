"""ONNX Softmax, LogSoftmax -> WebNN softmax / a stable log-softmax decomposition.

Opset 13+: along `axis`. Before 13: the input is coerced to 2-D at `axis`
([prod(dims[:axis]), prod(dims[axis:])]), normalised along axis 1, and reshaped back.
LogSoftmax = (x - max) - log(reduceSum(exp(x - max))) (never log(softmax)).
Restrictions: float32/float16.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import norm_axis


def _log_softmax(ctx: ImportContext, x: Any, axis: int) -> Any:
    b = ctx.builder
    y = b.sub(x, b.reduce_max(x, axes=[axis], keep_dimensions=True))
    return b.sub(y, b.log(b.reduce_sum(b.exp(y), axes=[axis], keep_dimensions=True)))


def _apply(ctx: ImportContext, node: Node, x: Any, axis: int) -> Any:
    if node.op_type == "Softmax":
        return ctx.builder.softmax(x, axis)
    return _log_softmax(ctx, x, axis)


@onnx_op(("Softmax", "LogSoftmax"), since=1)
def softmax_2d(ctx: ImportContext, node: Node) -> list[Any]:
    x = ctx.operand(node.inputs[0])
    axis = norm_axis(node.attrs["axis"], x.rank)
    if x.rank == 2 and axis == 1:
        return [_apply(ctx, node, x, 1)]
    flat = [int(np.prod(x.shape[:axis], dtype=np.int64)),
            int(np.prod(x.shape[axis:], dtype=np.int64))]
    y = _apply(ctx, node, ctx.builder.reshape(x, flat), 1)
    return [ctx.builder.reshape(y, list(x.shape))]


@onnx_op(("Softmax", "LogSoftmax"), since=13)
def softmax(ctx: ImportContext, node: Node) -> list[Any]:
    x = ctx.operand(node.inputs[0])
    return [_apply(ctx, node, x, norm_axis(node.attrs["axis"], x.rank))]
