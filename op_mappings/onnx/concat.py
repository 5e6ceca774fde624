"""ONNX Concat -> WebNN concat (negative axis normalised).

Empty inputs (zero-size constants, e.g. from a Split with a zero size) are dropped.
Restrictions: rank >= 1 inputs of one data type (WebNN concat).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import norm_axis
from op_mappings.onnx import onnx_op


def _fold(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any]:
    arrays = [np.asarray(v) for v in values if v is not None]
    axis = norm_axis(node.attrs["axis"], arrays[0].ndim)
    shapes = [list(a.shape) for a in arrays]
    if any(len(s) != len(shapes[0]) or s[:axis] + s[axis + 1:] != shapes[0][:axis]
           + shapes[0][axis + 1:] for s in shapes):
        raise InvalidModel(f"the inputs' shapes {shapes} differ on an axis other than {axis}")
    dtype = np.result_type(*arrays)
    ctx.check_constant(sum(int(np.size(a)) for a in arrays), dtype)
    return [np.concatenate([np.asarray(a, dtype) for a in arrays], axis=axis)]


@onnx_op("Concat", since=4, fold=_fold)
def concat(ctx: ImportContext, node: Node) -> Outputs:
    names = [n for n in node.inputs if n and not (n in ctx.consts and ctx.consts[n].size == 0)]
    operands = [ctx.operand(n) for n in names]
    axis = norm_axis(node.attrs["axis"], operands[0].rank)
    return [operands[0] if len(operands) == 1 else ctx.builder.concat(operands, axis)]
