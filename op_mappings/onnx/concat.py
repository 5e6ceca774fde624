"""ONNX Concat -> WebNN concat (negative axis normalised).

Restrictions: rank >= 1 inputs of one data type (WebNN concat).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.formats.onnx import Node
from converter.importer import ImportContext
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import norm_axis


def _fold(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any]:
    arrays = [v for v in values if v is not None]
    axis = norm_axis(node.attrs["axis"], arrays[0].ndim)
    dtype = np.result_type(*arrays)
    return [np.concatenate([np.asarray(a, dtype) for a in arrays], axis=axis)]


@onnx_op("Concat", since=4, fold=_fold)
def concat(ctx: ImportContext, node: Node) -> list[Any]:
    operands = [ctx.operand(n) for n in node.inputs if n]
    axis = norm_axis(node.attrs["axis"], operands[0].rank)
    return [ctx.builder.concat(operands, axis)]
