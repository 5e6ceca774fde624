"""ONNX Mod -> WebNN arithmetic.

fmod=1 (C fmod, sign of the dividend): floats a - b·trunc(a / b) (a zero quotient
contributes 0, so fmod(a, ±inf) = a); integers a - b·(a / b) (WebNN integer division
truncates). fmod=0 (sign of the divisor; numpy.mod, defined for floats since opset 28): the
same remainder plus b where it is non-zero and its sign differs from b's (floats: a zero
remainder takes b's sign).
Restrictions: integer division by zero is unspecified in WebNN.
"""

from __future__ import annotations

from converter.core.ir import Node
from converter.core.webnn.dtypes import FLOAT_TYPES
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import scalar
from op_mappings.onnx import onnx_op


@onnx_op("Mod", since=10)
def mod(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x, y = ctx.inputs(node)
    dt = x.data_type
    q = b.div(x, y)
    if dt in FLOAT_TYPES:
        zero = scalar(ctx, 0, dt)
        q = b.where(b.lesser(q, zero), b.ceil(q), b.floor(q))
        # q = 0 (|x| < |y|, also y = ±inf) contributes nothing (inf·0 would be NaN)
        r = b.sub(x, b.where(b.equal(q, zero), zero, b.mul(y, q)))
        if int(node.attrs["fmod"]):
            return [r]
        # fmod=0 (ONNX 28 defines it for floats as numpy.mod): move a non-zero remainder
        # whose sign differs from y's by y; a zero remainder takes y's sign
        differ = b.logical_and(b.not_equal(r, zero),
                               b.logical_xor(b.lesser(r, zero), b.lesser(y, zero)))
        r = b.where(differ, b.add(r, y), r)
        signed_zero = b.where(b.lesser(y, zero), scalar(ctx, -0.0, dt), zero)
        return [b.where(b.equal(r, zero), signed_zero, r)]
    r = b.sub(x, b.mul(y, q))
    if int(node.attrs["fmod"]) or dt.startswith("uint"):
        return [r]
    zero = scalar(ctx, 0, dt)
    differ = b.logical_and(b.not_equal(r, zero),
                           b.logical_xor(b.lesser(r, zero), b.lesser(y, zero)))
    return [b.where(differ, b.add(r, y), r)]
