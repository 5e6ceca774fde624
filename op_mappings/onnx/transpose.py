"""ONNX Transpose -> WebNN transpose (no `perm` = reverse the dimensions).

Restrictions: none beyond WebNN transpose.
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


def _perm(ctx: ImportContext, node: Node) -> list[int]:
    rank = len(ctx.shape(node.inputs[0]))
    perm = node.attrs.get("perm")
    if perm is None:
        return list(range(rank))[::-1]
    out = ints(perm, "perm")
    if sorted(out) != list(range(rank)):
        raise InvalidModel(f"perm {out} is not a permutation of the {rank} axes")
    return out


def _fold(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any]:
    return [np.transpose(values[0], _perm(ctx, node))]


@onnx_op("Transpose", since=1, fold=_fold)
def transpose(ctx: ImportContext, node: Node) -> Outputs:
    return [ctx.builder.transpose(ctx.operand(node.inputs[0]), permutation=_perm(ctx, node))]
