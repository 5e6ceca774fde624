"""ONNX Shrink, ThresholdedRelu, Swish -> element-wise WebNN chains; Hardmax -> argMax +
equal + where.

- Shrink: x < -lambd -> x + bias; x > lambd -> x - bias; else 0 (any numeric type).
- ThresholdedRelu: x > alpha -> x, else 0.
- Swish (24): x · sigmoid(alpha · x).
- Hardmax: 1 at the first maximum along `axis`, 0 elsewhere; before opset 13 the input is
  coerced to 2-D at `axis` ([prod(:axis), prod(axis:)]) first.
Restrictions: Swish/Hardmax float32/float16 (WebNN sigmoid / argMax limits apply).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from op_mappings.onnx import onnx_op
from op_mappings.onnx._helpers_ext import scalar
from op_mappings.onnx._util import norm_axis


@onnx_op("Shrink", since=9)
def shrink(ctx: ImportContext, node: Node) -> list[Any]:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    dt = x.data_type
    lambd, bias = float(node.attrs["lambd"]), float(node.attrs["bias"])
    low = b.where(b.lesser(x, scalar(ctx, -lambd, dt)), b.add(x, scalar(ctx, bias, dt)),
                  scalar(ctx, 0, dt))
    return [b.where(b.greater(x, scalar(ctx, lambd, dt)), b.sub(x, scalar(ctx, bias, dt)),
                    low)]


@onnx_op("ThresholdedRelu", since=10)
def thresholded_relu(ctx: ImportContext, node: Node) -> list[Any]:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    keep = b.greater(x, scalar(ctx, float(node.attrs["alpha"]), x.data_type))
    return [b.where(keep, x, scalar(ctx, 0, x.data_type))]


@onnx_op("Swish", since=24)
def swish(ctx: ImportContext, node: Node) -> list[Any]:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    alpha = float(node.attrs.get("alpha", 1.0))
    inner = x if alpha == 1.0 else b.mul(x, scalar(ctx, alpha, x.data_type))
    return [b.mul(x, b.sigmoid(inner))]


def _hardmax(ctx: ImportContext, x: Any, axis: int) -> Any:
    b = ctx.builder
    idx = b.arg_max(x, axis=axis, keep_dimensions=True, output_data_type="int32")
    shape = [1] * x.rank
    shape[axis] = x.shape[axis]
    iota = ctx.constant(np.arange(x.shape[axis], dtype=np.int32).reshape(shape))
    dt = x.data_type
    return b.where(b.equal(idx, iota), scalar(ctx, 1, dt), scalar(ctx, 0, dt))


@onnx_op("Hardmax", since=1)
def hardmax_2d(ctx: ImportContext, node: Node) -> list[Any]:
    x = ctx.operand(node.inputs[0])
    axis = norm_axis(node.attrs["axis"], x.rank)
    flat = [math.prod(x.shape[:axis]), math.prod(x.shape[axis:])]
    y = _hardmax(ctx, ctx.builder.reshape(x, flat), 1)
    return [ctx.builder.reshape(y, list(x.shape))]


@onnx_op("Hardmax", since=13)
def hardmax(ctx: ImportContext, node: Node) -> list[Any]:
    x = ctx.operand(node.inputs[0])
    return [_hardmax(ctx, x, norm_axis(node.attrs["axis"], x.rank))]
