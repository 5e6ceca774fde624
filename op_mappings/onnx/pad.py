"""ONNX Pad (opsets 1, 2, 11, 18, 19) and CenterCropPad (18) -> WebNN pad / slice / gather.

Pad: pads are `[begin..., end...]` over all axes (or over `axes`, opset 18). Negative pads
crop (slice first, then pad). Modes: constant -> pad(constant) (a `constant_value` computed
in the graph is applied with a constant mask + where); edge -> pad(edge); reflect ->
pad(reflection) when every pad is smaller than its dimension, else a constant gather table
(numpy's reflect pattern); wrap (opset 19) -> gather with a constant wrap-around table.
CenterCropPad: per axis, crop the centre (slice, the extra element taken from the end side
as ONNX's floor((in - out) / 2) start says) or pad with zeros around it (the extra zero at
the end).
Restrictions: pads/axes/shape must be constants; empty results are not representable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import const_or_none, ints
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import norm_axes


def pad_operand(ctx: ImportContext, x: MLOperand, begin: list[int], end: list[int], mode: str,
                value: float | MLOperand = 0.0) -> MLOperand:
    """Pad x (begin/end per axis, negatives crop) with ONNX mode semantics; `value` is a
    number or an operand (constant mode)."""
    b = ctx.builder
    if any(p < 0 for p in begin + end):
        starts = [max(0, -p) for p in begin]
        sizes = [n - max(0, -p) - max(0, -q) for n, p, q in zip(x.shape, begin, end,
                                                                 strict=True)]
        if any(s <= 0 for s in sizes):
            raise UnsupportedAttribute(f"Pad crops {list(x.shape)} to an empty tensor")
        x = b.slice(x, starts, sizes)
        begin, end = [max(0, p) for p in begin], [max(0, p) for p in end]
    if not any(begin) and not any(end):
        return x if x.kind == "output" else b.identity(x)
    out_shape = [n + p + q for n, p, q in zip(x.shape, begin, end, strict=True)]
    if ctx.folding:
        ctx.check_constant(out_shape, x.data_type)
    if mode == "constant":
        if not isinstance(value, MLOperand):
            return b.pad(x, begin, end, mode="constant", value=value)
        padded = b.pad(x, begin, end, mode="constant", value=0)
        ctx.check_constant(out_shape, np.uint8, "the pad mask would take")
        mask = np.pad(np.ones(x.shape, np.uint8), list(zip(begin, end, strict=True)))
        return b.where(ctx.constant(mask), padded, value)
    if mode == "edge":
        return b.pad(x, begin, end, mode="edge")
    if mode == "reflect" and all(p < n for p, n in zip(begin, x.shape, strict=True)) and all(
            q < n for q, n in zip(end, x.shape, strict=True)):
        return b.pad(x, begin, end, mode="reflection")
    if mode not in ("reflect", "wrap"):
        raise UnsupportedAttribute(f"Pad mode {mode!r} is unknown")
    for axis, (p, q, n) in enumerate(zip(begin, end, x.shape, strict=True)):
        if p or q:
            ctx.check_constant(p + n + q, np.int32, "the pad index table would take")
            if mode == "reflect" and n == 1:
                table = np.zeros(p + n + q, np.int32)
            else:
                table = np.pad(np.arange(n, dtype=np.int32), (p, q),
                               mode="reflect" if mode == "reflect" else "wrap")
            x = b.gather(x, ctx.constant(table), axis=axis)
    return x


def _pads(node: Node, rank: int, raw: list[int], axes_value: Any) -> tuple[list[int], list[int]]:
    axes = list(range(rank)) if axes_value is None else norm_axes(axes_value, rank, "Pad axes")
    if len(raw) != 2 * len(axes):
        raise InvalidModel(f"Pad pads {raw} need {2 * len(axes)} values for axes {axes}")
    begin, end = [0] * rank, [0] * rank
    for i, a in enumerate(axes):
        begin[a], end[a] = raw[i], raw[len(axes) + i]
    return begin, end


@onnx_op("Pad", since=1)
def pad1(ctx: ImportContext, node: Node) -> Outputs:
    """Pad-1/2: `paddings`/`pads` and `value` attributes."""
    x = ctx.operand(node.inputs[0])
    raw = ints(node.attrs["paddings"] if node.version < 2 else node.attrs["pads"])
    begin, end = _pads(node, x.rank, raw, None)
    return [pad_operand(ctx, x, begin, end, str(node.attrs["mode"]),
                        float(node.attrs.get("value", 0.0)))]


@onnx_op("Pad", since=2)
def pad2(ctx: ImportContext, node: Node) -> Outputs:
    return pad1(ctx, node)


@onnx_op("Pad", since=11, const_inputs=(1, 3))
def pad11(ctx: ImportContext, node: Node) -> Outputs:
    """Pad-11+: pads, constant_value and (18+) axes inputs; wrap mode from 19."""
    x = ctx.operand(node.inputs[0])
    begin, end = _pads(node, x.rank, ints(ctx.const_input(node, 1)),
                       ctx.const_input(node, 3))
    value: Any = 0
    name = node.input(2)
    if name:
        const = const_or_none(ctx, name)
        if const is None:
            value = ctx.builder.reshape(ctx.operand(name), [])
        elif const.size:
            value = const.reshape(-1)[0].item()
    return [pad_operand(ctx, x, begin, end, str(node.attrs["mode"]), value)]


@onnx_op("CenterCropPad", since=18, const_inputs=(1,))
def center_crop_pad(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    shape = ints(ctx.const_input(node, 1))
    axes_attr = node.attrs.get("axes")
    axes = (list(range(x.rank)) if not axes_attr
            else norm_axes(list(axes_attr), x.rank, "CenterCropPad axes"))
    if len(shape) != len(axes):
        raise InvalidModel(f"CenterCropPad shape {shape} does not match axes {axes}")
    begin, end = [0] * x.rank, [0] * x.rank
    for a, want in zip(axes, shape, strict=True):
        n = x.shape[a]
        if want < n:
            start = (n - want) // 2
            begin[a], end[a] = -start, -(n - want - start)
        elif want > n:
            extra = want - n
            begin[a], end[a] = extra // 2, extra - extra // 2
    return [pad_operand(ctx, x, begin, end, "constant", 0)]
