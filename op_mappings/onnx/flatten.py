"""ONNX Flatten -> WebNN reshape to [prod(dims[:axis]), prod(dims[axis:])].

Restrictions: none beyond WebNN reshape (negative axis from opset 11).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op


def _shape(ctx: ImportContext, node: Node) -> list[int]:
    dims = ctx.shape(node.inputs[0])
    axis = int(node.attrs["axis"])
    axis = axis + len(dims) if axis < 0 else axis
    return [int(np.prod(dims[:axis], dtype=np.int64)), int(np.prod(dims[axis:], dtype=np.int64))]


def _fold(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any]:
    return [np.reshape(values[0], _shape(ctx, node))]


@onnx_op("Flatten", since=1, fold=_fold)
def flatten(ctx: ImportContext, node: Node) -> Outputs:
    return [ctx.builder.reshape(ctx.operand(node.inputs[0]), _shape(ctx, node))]
