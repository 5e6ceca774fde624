"""ADD, SUB, MUL, DIV, MAXIMUM, MINIMUM, POW, SQUARED_DIFFERENCE, FLOOR_DIV, FLOOR_MOD.

Operands broadcast numpy-style (WebNN broadcasts the same way). ADD/SUB/MUL/DIV apply their
fused activation. Integer DIV truncates toward zero in both; FLOOR_DIV / FLOOR_MOD are
emulated with floor (float) or a truncation fix-up with `where` (integers). Quantized
operands run as dequantize -> float op -> quantize (int16 activations are not supported).
"""

from __future__ import annotations

import numpy as np

from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.core.webnn.dtypes import FLOAT_TYPES
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import activation, fin, fout

_METHODS = {"ADD": "add", "SUB": "sub", "MUL": "mul", "DIV": "div", "MAXIMUM": "max",
            "MINIMUM": "min", "POW": "pow"}


def _pair(ctx: ImportContext, node: Node) -> tuple[MLOperand, MLOperand]:
    a, b = fin(ctx, node, 0), fin(ctx, node, 1)
    assert a is not None and b is not None
    return a, b


@tflite_op(("ADD", "SUB", "MUL", "DIV"), since=1)
def arithmetic(ctx: ImportContext, node: Node) -> Outputs:
    """ADD/SUB/MUL/DIV + fused activation."""
    a, b = _pair(ctx, node)
    y = getattr(ctx.builder, _METHODS[node.op_type])(a, b)
    return [fout(ctx, node, 0, activation(ctx, y, node.attrs.get("fused_activation_function",
                                                                  0)))]


@tflite_op(("MAXIMUM", "MINIMUM", "POW"), since=1)
def minmax_pow(ctx: ImportContext, node: Node) -> Outputs:
    """MAXIMUM/MINIMUM/POW element-wise."""
    a, b = _pair(ctx, node)
    return [fout(ctx, node, 0, getattr(ctx.builder, _METHODS[node.op_type])(a, b))]


@tflite_op("SQUARED_DIFFERENCE", since=1)
def squared_difference(ctx: ImportContext, node: Node) -> Outputs:
    """SQUARED_DIFFERENCE = (a - b)^2."""
    a, b = _pair(ctx, node)
    d = ctx.builder.sub(a, b)
    return [fout(ctx, node, 0, ctx.builder.mul(d, d))]


def _zero(ctx: ImportContext, like: MLOperand) -> MLOperand:
    return ctx.builder.constant(np.array(0, dtype=like.data_type))


def _floor_parts(ctx: ImportContext, a: MLOperand, b: MLOperand
                 ) -> tuple[MLOperand, MLOperand]:
    """(quotient, fix-up condition) for integer floor division."""
    bld = ctx.builder
    q = bld.div(a, b)
    r = bld.sub(a, bld.mul(q, b))
    zero = _zero(ctx, a)
    cond = bld.logical_and(bld.not_equal(r, zero),
                           bld.not_equal(bld.lesser(r, zero), bld.lesser(b, zero)))
    return q, cond


@tflite_op("FLOOR_DIV", since=1)
def floor_div(ctx: ImportContext, node: Node) -> Outputs:
    """FLOOR_DIV: floor(a / b); integers via truncating division and a fix-up."""
    a, b = _pair(ctx, node)
    bld = ctx.builder
    if a.data_type in FLOAT_TYPES:
        return [fout(ctx, node, 0, bld.floor(bld.div(a, b)))]
    q, cond = _floor_parts(ctx, a, b)
    one = ctx.builder.constant(np.array(1, dtype=a.data_type))
    return [bld.where(cond, bld.sub(q, one), q)]


@tflite_op("FLOOR_MOD", since=1)
def floor_mod(ctx: ImportContext, node: Node) -> Outputs:
    """FLOOR_MOD: result has the sign of b (a - floor(a / b) * b)."""
    a, b = _pair(ctx, node)
    bld = ctx.builder
    if a.data_type in FLOAT_TYPES:
        # TFLite: m = fmod(a, b); m + b when m != 0 and sign(m) != sign(b)
        t = bld.div(a, b)
        trunc = bld.mul(bld.sign(t), bld.floor(bld.abs(t)))
        m = bld.sub(a, bld.mul(trunc, b))
        zero = _zero(ctx, a)
        cond = bld.logical_and(bld.not_equal(m, zero),
                               bld.not_equal(bld.lesser(m, zero), bld.lesser(b, zero)))
        return [fout(ctx, node, 0, bld.where(cond, bld.add(m, b), m))]
    q, cond = _floor_parts(ctx, a, b)
    r = bld.sub(a, bld.mul(q, b))
    return [bld.where(cond, bld.add(r, b), r)]
