"""ONNX Gather -> WebNN gather (negative axis normalised; negative indices allowed by both).

Constant indices out of range are an invalid model (as in ONNX).
Restrictions: int32/int64 indices; out-of-range indices are clamped by WebNN (ONNX errors).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import check_indices
from op_mappings._common.values import norm_axis
from op_mappings.onnx import onnx_op


def _fold(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any]:
    data = values[0]
    axis = norm_axis(node.attrs["axis"], np.ndim(data))
    shape = np.shape(data)
    idx = check_indices(values[1], shape[axis])
    ctx.check_constant([*shape[:axis], *idx.shape, *shape[axis + 1:]], np.asarray(data).dtype)
    return [np.take(data, idx, axis=axis)]


@onnx_op("Gather", since=1, fold=_fold)
def gather(ctx: ImportContext, node: Node) -> Outputs:
    x, idx = ctx.inputs(node)
    axis = norm_axis(node.attrs["axis"], x.rank)
    if node.inputs[1] in ctx.consts:  # ONNX refuses indices out of range; WebNN clamps
        check_indices(ctx.consts[node.inputs[1]], x.shape[axis])
    return [ctx.builder.gather(x, idx, axis=axis)]
