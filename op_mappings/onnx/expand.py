"""ONNX Expand -> WebNN expand to broadcast(input.shape, shape).

ONNX Expand is bidirectional (the shape may hold 1s where the input is larger); WebNN expand
is unidirectional, so the broadcast shape is computed first.
Restrictions: the shape input must be constant.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import ints
from op_mappings.onnx import onnx_op


def _shape(ctx: ImportContext, node: Node) -> list[int]:
    target = ints(ctx.const_input(node, 1), "shape")
    try:
        return list(np.broadcast_shapes(ctx.shape(node.inputs[0]), tuple(target)))
    except (ValueError, RuntimeError) as exc:  # numpy: RuntimeError beyond its rank limit
        raise InvalidModel(f"Expand: {exc}") from exc


def _fold(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any]:
    shape = _shape(ctx, node)
    ctx.check_constant(shape, np.asarray(values[0]).dtype)
    return [np.broadcast_to(values[0], shape).copy()]


@onnx_op("Expand", since=8, const_inputs=(1,), fold=_fold)
def expand(ctx: ImportContext, node: Node) -> Outputs:
    return [ctx.builder.expand(ctx.operand(node.inputs[0]), _shape(ctx, node))]
