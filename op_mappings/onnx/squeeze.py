"""ONNX Squeeze -> WebNN reshape.

Axes come from the attribute (opset 1-12) or the constant input (13+); without axes every
size-1 dimension is removed.
Restrictions: axes must be constant.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import norm_axes


def _shape(ctx: ImportContext, node: Node) -> list[int]:
    dims = ctx.shape(node.inputs[0])
    raw = node.attrs.get("axes") if node.version < 13 else ctx.const_input(node, 1)
    if raw is None:
        return [d for d in dims if d != 1]
    axes = norm_axes(raw, len(dims))
    for a in axes:
        if dims[a] != 1:
            raise InvalidModel(f"Squeeze axis {a} has size {dims[a]}, not 1")
    return [d for i, d in enumerate(dims) if i not in axes]


def _fold(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any]:
    return [np.reshape(values[0], _shape(ctx, node))]


@onnx_op("Squeeze", since=1, fold=_fold)
def squeeze(ctx: ImportContext, node: Node) -> Outputs:
    return [ctx.builder.reshape(ctx.operand(node.inputs[0]), _shape(ctx, node))]


@onnx_op("Squeeze", since=13, const_inputs=(1,), fold=_fold)
def squeeze13(ctx: ImportContext, node: Node) -> Outputs:
    return squeeze(ctx, node)
