"""ONNX Abs, Neg, Ceil, Floor, Round, Sqrt, Exp, Log, Sin, Cos, Tan, Erf, Reciprocal, Sign ->
the WebNN unary op of the same meaning (Round -> roundEven: both round half to even).

Restrictions: WebNN's per-op types: Abs, Neg, Sign take float32/float16/int64/int32/int8;
the others take float32/float16 only.
"""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op

_METHODS = {"Abs": "abs", "Neg": "neg", "Ceil": "ceil", "Floor": "floor", "Round": "round_even",
            "Sqrt": "sqrt", "Exp": "exp", "Log": "log", "Sin": "sin", "Cos": "cos",
            "Tan": "tan", "Erf": "erf", "Reciprocal": "reciprocal", "Sign": "sign"}


@onnx_op(tuple(_METHODS), since=1)
def unary(ctx: ImportContext, node: Node) -> Outputs:
    return [getattr(ctx.builder, _METHODS[node.op_type])(ctx.operand(node.inputs[0]))]
