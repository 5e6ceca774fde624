"""ONNX Tile -> WebNN tile.

Restrictions: repeats must be constant and non-zero (empty results are not representable).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import int_list
from op_mappings.onnx import onnx_op


def _fold(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any]:
    data = np.asarray(values[0])
    reps = int_list(values[1], "repeats", data.ndim, 0)
    ctx.check_constant([d * r for d, r in zip(data.shape, reps, strict=True)], data.dtype)
    return [np.tile(data, reps)]


@onnx_op("Tile", since=6, const_inputs=(1,), fold=_fold)
def tile(ctx: ImportContext, node: Node) -> Outputs:
    reps = int_list(ctx.const_input(node, 1), "repeats", len(ctx.shape(node.inputs[0])), 0)
    if 0 in reps:
        raise ctx.unsupported(f"Tile repeats {reps} contain 0 (empty result)")
    return [ctx.builder.tile(ctx.operand(node.inputs[0]), reps)]
