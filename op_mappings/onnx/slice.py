"""ONNX Slice -> WebNN slice (positive steps) or reverse + slice (negative steps).

starts/ends are clamped like Python slicing (negative values count from the end, INT_MAX
ends); opset 1-9 take them from attributes, 10+ from constant inputs (axes, steps optional).
An empty result (e.g. the empty pass-through part Phi-3's rotary embedding slices off and
concatenates) is a constant: it has no elements (WebNN operands cannot be empty; Concat
drops it, the nodes reading it fold).
Restrictions: starts/ends/axes/steps must be constant.
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
from op_mappings.onnx._util import empty_value, norm_axes


def _slices(ctx: ImportContext, node: Node) -> list[slice]:
    dims = ctx.shape(node.inputs[0])
    if node.version < 10:
        starts, ends = ints(node.attrs["starts"]), ints(node.attrs["ends"])
        axes_raw, steps = node.attrs.get("axes"), None
    else:
        starts, ends = ints(ctx.const_input(node, 1)), ints(ctx.const_input(node, 2))
        axes_raw, steps_raw = ctx.const_input(node, 3), ctx.const_input(node, 4)
        steps = None if steps_raw is None else ints(steps_raw)
    axes = list(range(len(starts))) if axes_raw is None else norm_axes(axes_raw, len(dims))
    steps = steps or [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise InvalidModel("Slice starts/ends/axes/steps lengths differ")
    out = [slice(None)] * len(dims)
    for s, e, a, st in zip(starts, ends, axes, steps, strict=True):
        if st == 0:
            raise InvalidModel("Slice step must not be 0")
        out[a] = slice(s, e, st)
    return out


def _fold(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any]:
    return [np.asarray(values[0])[tuple(_slices(ctx, node))]]


@onnx_op("Slice", since=1, fold=_fold)
def slice_(ctx: ImportContext, node: Node) -> Outputs:
    ranges = [range(*sl.indices(dim))
              for sl, dim in zip(_slices(ctx, node), ctx.shape(node.inputs[0]), strict=True)]
    if any(len(r) == 0 for r in ranges):
        return [empty_value(ctx, node.inputs[0], [len(r) for r in ranges])]
    x = ctx.operand(node.inputs[0])
    b = ctx.builder
    starts, sizes, strides, reverse = [], [], [], []
    for axis, (r, dim) in enumerate(zip(ranges, x.shape, strict=True)):
        start, step, count = r.start, r.step, len(r)
        if step < 0:
            reverse.append(axis)
            start = dim - 1 - start
        starts.append(start)
        sizes.append((count - 1) * abs(step) + 1)
        strides.append(abs(step))
    if reverse:
        x = b.reverse(x, axes=reverse)
    if starts == [0] * x.rank and sizes == list(x.shape) and strides == [1] * x.rank:
        return [x if reverse else b.identity(x)]
    return [b.slice(x, starts, sizes, strides=strides)]


@onnx_op("Slice", since=10, const_inputs=(1, 2, 3, 4), fold=_fold)
def slice10(ctx: ImportContext, node: Node) -> Outputs:
    return slice_(ctx, node)
