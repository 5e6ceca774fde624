"""ABS, CEIL, COS, EXP, FLOOR, LOG, NEG, SIN, SIGN, SQRT, RSQRT, SQUARE, ROUND.

Same-named WebNN unary ops; RSQRT = reciprocal(sqrt(x)); SQUARE = x * x; ROUND = roundEven
(TFLite ROUND is half to even). Quantized tensors run through dequantize/quantize.
"""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import fin, fin_required, fout

_SAME = {"ABS": "abs", "CEIL": "ceil", "COS": "cos", "EXP": "exp", "FLOOR": "floor",
         "LOG": "log", "NEG": "neg", "SIN": "sin", "SIGN": "sign", "SQRT": "sqrt",
         "ROUND": "round_even"}


@tflite_op(tuple(_SAME), since=1)
def unary(ctx: ImportContext, node: Node) -> Outputs:
    """One WebNN op of the same meaning."""
    x = fin(ctx, node, 0)
    return [fout(ctx, node, 0, getattr(ctx.builder, _SAME[node.op_type])(x))]


@tflite_op("RSQRT", since=1)
def rsqrt(ctx: ImportContext, node: Node) -> Outputs:
    """RSQRT = reciprocal(sqrt(x))."""
    x = fin_required(ctx, node, 0)
    return [fout(ctx, node, 0, ctx.builder.reciprocal(ctx.builder.sqrt(x)))]


@tflite_op("SQUARE", since=1)
def square(ctx: ImportContext, node: Node) -> Outputs:
    """SQUARE = x * x."""
    x = fin_required(ctx, node, 0)
    return [fout(ctx, node, 0, ctx.builder.mul(x, x))]
