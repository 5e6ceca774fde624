"""ONNX ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
ReduceLogSum, ReduceLogSumExp, ReduceSumSquare -> the WebNN reduce op of the same meaning.

Axes: attribute before opset 18 (13 for ReduceSum), constant input after. `keepdims` is always
passed (ONNX default 1, WebNN false). Empty/absent axes reduce everything unless
`noop_with_empty_axes = 1`, which maps to `axes: []` (the per-element function only).
Restrictions: axes must be constant; WebNN's per-op data types (L2, LogSum, LogSumExp, Mean
take floats only).
"""

from __future__ import annotations

from typing import Any

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import norm_axes

_METHODS = {"ReduceSum": "reduce_sum", "ReduceMean": "reduce_mean", "ReduceMax": "reduce_max",
            "ReduceMin": "reduce_min", "ReduceProd": "reduce_product", "ReduceL1": "reduce_l1",
            "ReduceL2": "reduce_l2", "ReduceLogSum": "reduce_log_sum",
            "ReduceLogSumExp": "reduce_log_sum_exp", "ReduceSumSquare": "reduce_sum_square"}
_ATTR_FORM = tuple(op for op in _METHODS if op != "ReduceSum")


def _reduce(ctx: ImportContext, node: Node, axes_value: Any) -> list[Any]:
    x = ctx.operand(node.inputs[0])
    keep = bool(node.attrs["keepdims"])
    empty = axes_value is None or len(list(axes_value)) == 0
    axes: list[int] | None
    if empty:
        axes = [] if node.attrs.get("noop_with_empty_axes", 0) else None
    else:
        axes = norm_axes(axes_value, x.rank)
    return [getattr(ctx.builder, _METHODS[node.op_type])(x, axes=axes, keep_dimensions=keep)]


@onnx_op(_ATTR_FORM + ("ReduceSum",), since=1)
def reduce_attr(ctx: ImportContext, node: Node) -> Outputs:
    return _reduce(ctx, node, node.attrs.get("axes"))


@onnx_op("ReduceSum", since=13)
@onnx_op(_ATTR_FORM, since=18)
def reduce_input(ctx: ImportContext, node: Node) -> Outputs:
    axes = ctx.const_input(node, 1)
    return _reduce(ctx, node, None if axes is None else axes.reshape(-1).tolist())
