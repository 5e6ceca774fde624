"""ONNX Split -> WebNN split with explicit sizes.

Sizes come from the `split` attribute (before 13) or constant input (13+); otherwise equal
parts, one per output (opset 18 `num_outputs`: ceil-sized chunks, the last one smaller).
Zero sizes give empty outputs, which become empty constants (WebNN operands cannot be empty;
a later Concat drops them).
Restrictions: sizes must be constant.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import attr_in_range, int_list
from op_mappings._common.values import ints, norm_axis
from op_mappings.onnx import onnx_op


def _plan(ctx: ImportContext, node: Node) -> tuple[int, list[int]]:
    dims = ctx.shape(node.inputs[0])
    axis = norm_axis(node.attrs["axis"], len(dims))
    raw = node.attrs.get("split") if node.version < 13 else ctx.const_input(node, 1)
    n = len(node.outputs)
    if raw is not None and len(ints(raw, "split")):
        sizes = int_list(raw, "split", minimum=0)
    elif node.version >= 18 and "num_outputs" in node.attrs:
        n = int(attr_in_range(node, "num_outputs", 1))
        chunk = math.ceil(dims[axis] / n)
        sizes = [chunk] * (n - 1) + [dims[axis] - chunk * (n - 1)]
    else:
        if dims[axis] % n:
            raise InvalidModel(f"Split: dimension {dims[axis]} is not divisible into {n} parts")
        sizes = [dims[axis] // n] * n
    if sum(sizes) != dims[axis] or len(sizes) != len(node.outputs):
        raise InvalidModel(f"Split sizes {sizes} do not fit dimension {dims[axis]} and "
                           f"{len(node.outputs)} outputs")
    return axis, sizes


def _fold(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any]:
    axis, sizes = _plan(ctx, node)
    return list(np.split(np.asarray(values[0]), np.cumsum(sizes)[:-1], axis=axis))


@onnx_op("Split", since=2, fold=_fold)
def split(ctx: ImportContext, node: Node) -> Outputs:
    axis, sizes = _plan(ctx, node)
    x = ctx.operand(node.inputs[0])
    nonzero = [s for s in sizes if s]
    parts = iter(ctx.builder.split(x, nonzero, axis=axis) if len(nonzero) > 1 else [x])
    out: list[Any] = []
    for size in sizes:
        if size:
            out.append(next(parts))
        else:
            shape = list(x.shape)
            shape[axis] = 0
            out.append(np.zeros(shape, dtype=x.data_type))
    return out


@onnx_op("Split", since=13, const_inputs=(1,), fold=_fold)
def split13(ctx: ImportContext, node: Node) -> Outputs:
    return split(ctx, node)
