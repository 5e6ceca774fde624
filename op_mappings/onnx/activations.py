"""ONNX Relu, LeakyRelu, PRelu, Elu, Sigmoid, HardSigmoid, HardSwish, Softplus, Softsign,
Tanh -> the WebNN activation of the same meaning (alpha/beta attributes passed through).

Restrictions: float32/float16 inputs, except Relu and PRelu which also take int64/int32/int8
(WebNN limits). PRelu's slope broadcasts to the input (WebNN allows a superset).
"""

from __future__ import annotations

from typing import Any

from converter.core.ir import Node
from converter.importer import ImportContext
from op_mappings.onnx import onnx_op

_PLAIN = {"Relu": "relu", "Sigmoid": "sigmoid", "HardSwish": "hard_swish",
          "Softplus": "softplus", "Softsign": "softsign", "Tanh": "tanh"}


@onnx_op(tuple(_PLAIN), since=1)
def plain(ctx: ImportContext, node: Node) -> list[Any]:
    return [getattr(ctx.builder, _PLAIN[node.op_type])(ctx.operand(node.inputs[0]))]


@onnx_op("LeakyRelu", since=1)
def leaky_relu(ctx: ImportContext, node: Node) -> list[Any]:
    return [ctx.builder.leaky_relu(ctx.operand(node.inputs[0]), alpha=node.attrs["alpha"])]


@onnx_op("Elu", since=1)
def elu(ctx: ImportContext, node: Node) -> list[Any]:
    return [ctx.builder.elu(ctx.operand(node.inputs[0]), alpha=node.attrs["alpha"])]


@onnx_op("HardSigmoid", since=1)
def hard_sigmoid(ctx: ImportContext, node: Node) -> list[Any]:
    return [ctx.builder.hard_sigmoid(ctx.operand(node.inputs[0]), alpha=node.attrs["alpha"],
                                     beta=node.attrs["beta"])]


@onnx_op("PRelu", since=7)
def prelu(ctx: ImportContext, node: Node) -> list[Any]:
    x, slope = ctx.inputs(node)
    return [ctx.builder.prelu(x, slope)]
