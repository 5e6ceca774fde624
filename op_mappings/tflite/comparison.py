"""LESS, LESS_EQUAL, GREATER, GREATER_EQUAL, EQUAL, NOT_EQUAL -> WebNN comparisons (bool
results travel as uint8 0/1).

Quantized operands are compared as stored integers when both share parameters, otherwise
after dequantizing.
"""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import fin_required, is_quantized

_METHODS = {"LESS": "lesser", "LESS_EQUAL": "lesser_or_equal", "GREATER": "greater",
            "GREATER_EQUAL": "greater_or_equal", "EQUAL": "equal", "NOT_EQUAL": "not_equal"}


@tflite_op(tuple(_METHODS), since=1)
def compare(ctx: ImportContext, node: Node) -> Outputs:
    """Element-wise comparison with broadcasting."""
    ia, ib = node.input_infos[0], node.input_infos[1]
    if (is_quantized(ia) and is_quantized(ib) and ia is not None and ib is not None
            and ia.dtype == ib.dtype and ia.quant is not None and ia.quant.same_as(ib.quant)):
        a, b = ctx.operand(node.inputs[0]), ctx.operand(node.inputs[1])
    else:
        a, b = fin_required(ctx, node, 0), fin_required(ctx, node, 1)
    return [getattr(ctx.builder, _METHODS[node.op_type])(a, b)]
