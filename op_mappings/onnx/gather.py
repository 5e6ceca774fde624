"""ONNX Gather -> WebNN gather (negative axis normalised; negative indices allowed by both).

Restrictions: int32/int64 indices; out-of-range indices are clamped by WebNN (ONNX errors).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.importer import ImportContext
from converter.ir import Node
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import norm_axis


def _fold(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any]:
    data, idx = values[0], np.asarray(values[1]).astype(np.int64)
    axis = norm_axis(node.attrs["axis"], np.ndim(data))
    shape = np.shape(data)
    ctx.check_constant([*shape[:axis], *idx.shape, *shape[axis + 1:]], np.asarray(data).dtype)
    return [np.take(data, idx, axis=axis)]


@onnx_op("Gather", since=1, fold=_fold)
def gather(ctx: ImportContext, node: Node) -> list[Any]:
    x, idx = ctx.inputs(node)
    return [ctx.builder.gather(x, idx, axis=norm_axis(node.attrs["axis"], x.rank))]
