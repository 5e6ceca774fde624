"""ONNX Clip -> WebNN clamp (constant bounds) or max/min (bounds computed in the graph).

Opset 6: `min`/`max` attributes (the float32 extremes, the defaults, mean "no bound").
Opset 11+: optional `min`/`max` inputs. When min > max every element becomes max (ONNX
semantics, min(max(x, lo), hi)); WebNN clamp rejects that order, so it is emitted as
clamp(max, max).
Restrictions: the types WebNN clamp / max / min take.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import one_value
from op_mappings.onnx import onnx_op

_FLT_MAX = float(np.finfo(np.float32).max)


def _clamp(ctx: ImportContext, x: Any, lo: float | int | None, hi: float | int | None) -> Any:
    if lo is not None and hi is not None and lo > hi:
        lo = hi
    return ctx.builder.clamp(x, min_value=lo, max_value=hi)


@onnx_op("Clip", since=6)
def clip6(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    lo, hi = float(node.attrs["min"]), float(node.attrs["max"])
    return [_clamp(ctx, x, None if lo <= -_FLT_MAX else lo, None if hi >= _FLT_MAX else hi)]


@onnx_op("Clip", since=11)
def clip11(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    names = [node.input(1), node.input(2)]
    if all(not n or ctx.is_constant(n) for n in names):
        lo, hi = (None if not n else one_value(ctx.const_value(n), what).item()
                  for n, what in zip(names, ("min (input 1)", "max (input 2)"), strict=True))
        return [_clamp(ctx, x, lo, hi)]
    b = ctx.builder
    y = x
    if names[0]:
        y = b.max(y, ctx.operand(names[0]))
    if names[1]:
        y = b.min(y, ctx.operand(names[1]))
    return [y]
