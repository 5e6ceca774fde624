"""RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1, LOGISTIC, TANH, ELU, HARD_SWISH, LEAKY_RELU,
PRELU, GELU.

relu / clamp / sigmoid / tanh / elu (alpha 1) / hardSwish / leakyRelu(alpha) /
prelu(alpha broadcast from the right); GELU exact = WebNN gelu, GELU approximate = the tanh
formula built from primitives. Quantized tensors run through dequantize/quantize.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import fin, fin_required, fout

_CLAMPS = {"RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0), "RELU_0_TO_1": (0.0, 1.0)}
_SIMPLE = {"RELU": "relu", "LOGISTIC": "sigmoid", "TANH": "tanh", "ELU": "elu",
           "HARD_SWISH": "hard_swish"}


@tflite_op(tuple(_SIMPLE), since=1)
def simple(ctx: ImportContext, node: Node) -> Outputs:
    """relu, sigmoid, tanh, elu (alpha 1), hardSwish."""
    x = fin(ctx, node, 0)
    return [fout(ctx, node, 0, getattr(ctx.builder, _SIMPLE[node.op_type])(x))]


@tflite_op(tuple(_CLAMPS), since=1)
def clamps(ctx: ImportContext, node: Node) -> Outputs:
    """clamp to [0, 6], [-1, 1] or [0, 1]."""
    lo, hi = _CLAMPS[node.op_type]
    x = fin_required(ctx, node, 0)
    return [fout(ctx, node, 0, ctx.builder.clamp(x, min_value=lo, max_value=hi))]


@tflite_op("LEAKY_RELU", since=1)
def leaky_relu(ctx: ImportContext, node: Node) -> Outputs:
    """leakyRelu with the `alpha` option."""
    x = fin_required(ctx, node, 0)
    return [fout(ctx, node, 0, ctx.builder.leaky_relu(x, alpha=float(node.attrs["alpha"])))]


@tflite_op("PRELU", since=1)
def prelu(ctx: ImportContext, node: Node) -> Outputs:
    """prelu(x, alpha); alpha broadcasts numpy-style (e.g. [1, 1, C] against NHWC)."""
    x, alpha = fin(ctx, node, 0), fin(ctx, node, 1)
    assert x is not None and alpha is not None
    if alpha.data_type != x.data_type:
        alpha = ctx.builder.cast(alpha, x.data_type)
    return [fout(ctx, node, 0, ctx.builder.prelu(x, alpha))]


@tflite_op("GELU", since=1)
def gelu(ctx: ImportContext, node: Node) -> Outputs:
    """GELU: exact -> gelu; approximate -> 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)))."""
    x = fin(ctx, node, 0)
    assert x is not None
    b = ctx.builder
    if not node.attrs.get("approximate", False):
        return [fout(ctx, node, 0, b.gelu(x))]

    def c(v: float) -> Any:
        return b.constant(np.array(v, dtype=x.data_type))

    inner = b.mul(b.add(x, b.mul(c(0.044715), b.mul(x, b.mul(x, x)))),
                  c(math.sqrt(2.0 / math.pi)))
    y = b.mul(b.mul(c(0.5), x), b.add(c(1.0), b.tanh(inner)))
    return [fout(ctx, node, 0, y)]
