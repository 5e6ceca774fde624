"""ATAN2 (inputs: y, x) -> element-wise chain around `converter.core.webnn.decompose.atan`
(WebNN has no atan/atan2).

`a = atan(|y| / |x|)` in [0, π/2] (|y|/|x| = inf when x = 0 gives π/2); `a = π - a` where x
is negative (including -0, detected as 1/x < 0); the sign of y (including -0) is copied onto
the result. Special cases as std::atan2: y = x = 0 gives ±0 or ±π; both infinite gives
±π/4 or ±3π/4; NaN propagates.
Restrictions: y and x of one shape (LiteRT's kernel does not broadcast); float32 and float16 (float16 computed in float32 and cast back); LiteRT's
float64 variant has no WebNN type. Within a few float32 ulps of std::atan2.
"""

from __future__ import annotations

import math

from converter.core.errors import InvalidModel, UnsupportedDataType
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.core.webnn import decompose as dc
from converter.core.webnn.dtypes import FLOAT_TYPES
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op


def atan2(ctx: ImportContext, y: MLOperand, x: MLOperand) -> MLOperand:
    """atan2(y, x) in float32."""
    b = ctx.builder

    def c(v: float) -> MLOperand:
        return dc.scalar(b, v, "float32")

    def negative(v: MLOperand) -> MLOperand:  # v < 0 or v = -0
        return b.logical_or(b.lesser(v, c(0.0)), b.lesser(b.reciprocal(v), c(0.0)))

    ay, ax = b.abs(y), b.abs(x)
    a = dc.atan(b, b.div(ay, ax))
    a = b.where(b.logical_and(b.equal(ay, c(0.0)), b.equal(ax, c(0.0))), c(0.0), a)
    a = b.where(b.logical_and(b.is_infinite(ay), b.is_infinite(ax)), c(math.pi / 4), a)
    a = b.where(negative(x), b.sub(c(math.pi), a), a)
    return b.where(negative(y), b.neg(a), a)


@tflite_op("ATAN2", since=1)
def atan2_op(ctx: ImportContext, node: Node) -> Outputs:
    """atan2(y, x) from an atan polynomial (a few float32 ulps). Restrictions: float32 or
    float16; y and x of equal shape (as LiteRT)."""
    b = ctx.builder
    y, x = ctx.operand(node.inputs[0]), ctx.operand(node.inputs[1])
    dt = y.data_type
    if dt not in FLOAT_TYPES or x.data_type != dt:
        raise UnsupportedDataType(f"ATAN2 needs float32 or float16 inputs of one type, got "
                                  f"{y.data_type} and {x.data_type}")
    if list(y.shape) != list(x.shape):
        raise InvalidModel(f"ATAN2 inputs have shapes {list(y.shape)} and {list(x.shape)}; "
                           "LiteRT requires equal shapes")
    if dt == "float16":
        y, x = b.cast(y, "float32"), b.cast(x, "float32")
    out = atan2(ctx, y, x)
    return [b.cast(out, dt) if dt == "float16" else out]
