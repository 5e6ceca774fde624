"""ONNX Unsqueeze -> WebNN reshape.

Axes (attribute before opset 13, constant input from 13) are normalised against the OUTPUT
rank.
Restrictions: axes must be constant.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import norm_axes


def _shape(ctx: ImportContext, node: Node) -> list[int]:
    dims = list(ctx.shape(node.inputs[0]))
    raw = node.attrs["axes"] if node.version < 13 else ctx.const_input(node, 1)
    rank = len(dims) + np.asarray(raw).size
    axes = sorted(norm_axes(raw, rank))
    for a in axes:
        dims.insert(a, 1)
    return dims


def _fold(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any]:
    return [np.reshape(values[0], _shape(ctx, node))]


@onnx_op("Unsqueeze", since=1, fold=_fold)
def unsqueeze(ctx: ImportContext, node: Node) -> Outputs:
    return [ctx.builder.reshape(ctx.operand(node.inputs[0]), _shape(ctx, node))]


@onnx_op("Unsqueeze", since=13, const_inputs=(1,), fold=_fold)
def unsqueeze13(ctx: ImportContext, node: Node) -> Outputs:
    return unsqueeze(ctx, node)
