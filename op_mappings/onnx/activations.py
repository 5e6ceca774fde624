"""ONNX Relu, LeakyRelu, PRelu, Elu, Sigmoid, HardSigmoid, HardSwish, Softplus, Softsign,
Tanh -> the WebNN activation of the same meaning (alpha/beta attributes passed through);
Shrink, ThresholdedRelu, Swish -> element-wise WebNN chains:

- Shrink: x < -lambd -> x + bias; x > lambd -> x - bias; else 0 (any numeric type).
- ThresholdedRelu: x > alpha -> x, else 0.
- Swish (24): x · sigmoid(alpha · x).

Restrictions: float32/float16 inputs, except Relu and PRelu which also take int64/int32/int8
and Shrink which takes any numeric type (WebNN limits). PRelu's slope broadcasts to the input
(WebNN allows a superset).
"""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import scalar
from op_mappings.onnx import onnx_op

_PLAIN = {"Relu": "relu", "Sigmoid": "sigmoid", "HardSwish": "hard_swish",
          "Softplus": "softplus", "Softsign": "softsign", "Tanh": "tanh"}


@onnx_op(tuple(_PLAIN), since=1)
def plain(ctx: ImportContext, node: Node) -> Outputs:
    return [getattr(ctx.builder, _PLAIN[node.op_type])(ctx.operand(node.inputs[0]))]


@onnx_op("LeakyRelu", since=1)
def leaky_relu(ctx: ImportContext, node: Node) -> Outputs:
    return [ctx.builder.leaky_relu(ctx.operand(node.inputs[0]), alpha=node.attrs["alpha"])]


@onnx_op("Elu", since=1)
def elu(ctx: ImportContext, node: Node) -> Outputs:
    return [ctx.builder.elu(ctx.operand(node.inputs[0]), alpha=node.attrs["alpha"])]


@onnx_op("HardSigmoid", since=1)
def hard_sigmoid(ctx: ImportContext, node: Node) -> Outputs:
    return [ctx.builder.hard_sigmoid(ctx.operand(node.inputs[0]), alpha=node.attrs["alpha"],
                                     beta=node.attrs["beta"])]


@onnx_op("PRelu", since=7)
def prelu(ctx: ImportContext, node: Node) -> Outputs:
    x, slope = ctx.inputs(node)
    return [ctx.builder.prelu(x, slope)]


@onnx_op("Shrink", since=9)
def shrink(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    dt = x.data_type
    lambd, bias = float(node.attrs["lambd"]), float(node.attrs["bias"])
    low = b.where(b.lesser(x, scalar(ctx, -lambd, dt)), b.add(x, scalar(ctx, bias, dt)),
                  scalar(ctx, 0, dt))
    return [b.where(b.greater(x, scalar(ctx, lambd, dt)), b.sub(x, scalar(ctx, bias, dt)),
                    low)]


@onnx_op("ThresholdedRelu", since=10)
def thresholded_relu(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    keep = b.greater(x, scalar(ctx, float(node.attrs["alpha"]), x.data_type))
    return [b.where(keep, x, scalar(ctx, 0, x.data_type))]


@onnx_op("Swish", since=24)
def swish(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    alpha = float(node.attrs.get("alpha", 1.0))
    inner = x if alpha == 1.0 else b.mul(x, scalar(ctx, alpha, x.data_type))
    return [b.mul(x, b.sigmoid(inner))]
