"""ONNX lowerings: concat, expand, pad, reshape, reverse, slice, split, tile, transpose,
triangular (pure data movement: values are never converted).

Restrictions and notes:
- reverse is a Slice with step −1 on each reversed axis; empty axes is an Identity.
- pad maps to ONNX Pad modes constant / edge / reflect (WebNN "reflection").
- triangular uses ONNX Trilu where onnxruntime has a kernel for the data type and otherwise
  a Where with a constant mask of the trailing matrix.
"""

from __future__ import annotations

import numpy as np

from converter.core.webnn.operand import Operation
from converter.runtimes.onnxruntime.lowering.context import Emitter, lowering
from converter.runtimes.onnxruntime.lowering.quantize import transposed_dequantize

_TRILU_TYPES = {"float32", "float16", "int32", "int64"}


@lowering("concat")
def concat(e: Emitter, op: Operation) -> list[str]:
    inputs, axis = op.args
    return [e.node("Concat", [e.input(x) for x in inputs], op.outputs[0].data_type,
                   axis=int(axis))]


@lowering("expand")
def expand(e: Emitter, op: Operation) -> list[str]:
    x, shape = op.args
    return [e.node("Expand", [e.input(x), e.ints(shape, "shape")], x.data_type)]


@lowering("pad")
def pad(e: Emitter, op: Operation) -> list[str]:
    x, begin, end = op.args
    mode = {"constant": "constant", "edge": "edge", "reflection": "reflect"}[op.options["mode"]]
    inputs = [e.input(x), e.ints([*begin, *end], "pads")]
    if mode == "constant":
        inputs.append(e.scalar(op.options["value"], x.data_type, "pad_value"))
    return [e.node("Pad", inputs, x.data_type, mode=mode)]


@lowering("reshape")
def reshape(e: Emitter, op: Operation) -> list[str]:
    x, shape = op.args
    return [e.reshape(e.input(x), shape)]


@lowering("reverse")
def reverse(e: Emitter, op: Operation) -> list[str]:
    x = op.args[0]
    axes = [int(a) for a in op.options["axes"]]
    if not axes:
        return [e.node("Identity", [e.input(x)], x.data_type)]
    k = len(axes)
    return [e.node("Slice", [e.input(x), e.ints([-1] * k, "starts"),
                             e.ints([-(2**63)] * k, "ends"), e.ints(axes, "axes"),
                             e.ints([-1] * k, "steps")], x.data_type)]


@lowering("slice")
def slice_(e: Emitter, op: Operation) -> list[str]:
    x, starts, sizes = op.args
    if not starts:
        return [e.node("Identity", [e.input(x)], x.data_type)]
    strides = op.options["strides"]
    ends = [s + n for s, n in zip(starts, sizes, strict=True)]
    inputs = [e.input(x), e.ints(starts, "starts"), e.ints(ends, "ends"),
              e.ints(range(len(starts)), "axes")]
    if any(s != 1 for s in strides):
        inputs.append(e.ints(strides, "steps"))
    return [e.node("Slice", inputs, x.data_type)]


@lowering("split")
def split(e: Emitter, op: Operation) -> list[str]:
    x, splits = op.args
    axis = int(op.options["axis"])
    sizes = [out.shape[axis] for out in op.outputs]
    if len(sizes) == 1:
        return [e.node("Identity", [e.input(x)], x.data_type)]
    return e.node_multi("Split", [e.input(x), e.ints(sizes, "split")],
                        [x.data_type] * len(sizes), axis=axis)


@lowering("tile")
def tile(e: Emitter, op: Operation) -> list[str]:
    x, reps = op.args
    if not reps:
        return [e.node("Identity", [e.input(x)], x.data_type)]
    return [e.node("Tile", [e.input(x), e.ints(reps, "repeats")], x.data_type)]


@lowering("transpose")
def transpose(e: Emitter, op: Operation) -> list[str]:
    x = op.args[0]
    dequantized = transposed_dequantize(e, op)
    if dequantized is not None:
        return [dequantized]
    if x.rank == 0:
        return [e.node("Identity", [e.input(x)], x.data_type)]
    return [e.node("Transpose", [e.input(x)], x.data_type,
                   perm=[int(p) for p in op.options["permutation"]])]


@lowering("triangular")
def triangular(e: Emitter, op: Operation) -> list[str]:
    x = op.args[0]
    upper = bool(op.options["upper"])
    diagonal = int(op.options["diagonal"])
    if x.data_type in _TRILU_TYPES:
        return [e.node("Trilu", [e.input(x), e.scalar(diagonal, "int64", "k")], x.data_type,
                       upper=int(upper))]
    rows, cols = x.shape[-2:]
    offset = np.arange(cols)[None, :] - np.arange(rows)[:, None]
    keep = offset >= diagonal if upper else offset <= diagonal
    return [e.where(e.const(keep, "bool", "mask"), e.input(x), e.scalar(0, x.data_type))]
