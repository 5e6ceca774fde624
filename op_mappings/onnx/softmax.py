"""ONNX Softmax, LogSoftmax -> WebNN softmax / a stable log-softmax decomposition; Hardmax ->
argMax + equal + where.

Opset 13+: along `axis`. Before 13: the input is coerced to 2-D at `axis`
([prod(dims[:axis]), prod(dims[axis:])]), normalised along axis 1, and reshaped back.
LogSoftmax = (x - max) - log(reduceSum(exp(x - max))) (never log(softmax)). Hardmax: 1 at
the first maximum along `axis`, 0 elsewhere.
Restrictions: float32/float16 (WebNN argMax limits apply to Hardmax).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import norm_axis, scalar
from op_mappings.onnx import onnx_op


def _log_softmax(ctx: ImportContext, x: Any, axis: int) -> Any:
    b = ctx.builder
    y = b.sub(x, b.reduce_max(x, axes=[axis], keep_dimensions=True))
    return b.sub(y, b.log(b.reduce_sum(b.exp(y), axes=[axis], keep_dimensions=True)))


def _apply(ctx: ImportContext, node: Node, x: Any, axis: int) -> Any:
    if node.op_type == "Softmax":
        return ctx.builder.softmax(x, axis)
    return _log_softmax(ctx, x, axis)


@onnx_op(("Softmax", "LogSoftmax"), since=1)
def softmax_2d(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    axis = norm_axis(node.attrs["axis"], x.rank)
    if x.rank == 2 and axis == 1:
        return [_apply(ctx, node, x, 1)]
    flat = [int(np.prod(x.shape[:axis], dtype=np.int64)),
            int(np.prod(x.shape[axis:], dtype=np.int64))]
    y = _apply(ctx, node, ctx.builder.reshape(x, flat), 1)
    return [ctx.builder.reshape(y, list(x.shape))]


@onnx_op(("Softmax", "LogSoftmax"), since=13)
def softmax(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    return [_apply(ctx, node, x, norm_axis(node.attrs["axis"], x.rank))]


def _hardmax(ctx: ImportContext, x: Any, axis: int) -> Any:
    b = ctx.builder
    idx = b.arg_max(x, axis=axis, keep_dimensions=True, output_data_type="int32")
    shape = [1] * x.rank
    shape[axis] = x.shape[axis]
    iota = ctx.constant(np.arange(x.shape[axis], dtype=np.int32).reshape(shape))
    dt = x.data_type
    return b.where(b.equal(idx, iota), scalar(ctx, 1, dt), scalar(ctx, 0, dt))


@onnx_op("Hardmax", since=1)
def hardmax_2d(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    axis = norm_axis(node.attrs["axis"], x.rank)
    flat = [math.prod(x.shape[:axis]), math.prod(x.shape[axis:])]
    y = _hardmax(ctx, ctx.builder.reshape(x, flat), 1)
    return [ctx.builder.reshape(y, list(x.shape))]


@onnx_op("Hardmax", since=13)
def hardmax(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    return [_hardmax(ctx, x, norm_axis(node.attrs["axis"], x.rank))]
