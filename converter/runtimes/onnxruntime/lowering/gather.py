"""ONNX lowerings: gather, gatherElements, gatherND, scatterElements, scatterND.

Index values follow the reference runtime: converted to int64, clamped into
[-size, size - 1] of their dimension, so out-of-range indices never reach onnxruntime (which
would fail). The gather ops read negative indices from the back as ONNX defines, so runtime
indices only get one Clip (Min + Max for gatherND's per-position sizes); the scatter ops
also wrap negative ones (+ size). Constant indices are normalised at export time. Scatter ops use ONNX `reduction = "none"`; with duplicate indices the last update wins
in onnxruntime (WebNN leaves duplicates unspecified).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from converter.core.webnn.operand import MLOperand, Operation
from converter.runtimes.onnxruntime.lowering.context import Emitter, lowering


def normalized_indices(e: Emitter, indices: MLOperand, sizes: int | Sequence[int],
                       wrap: bool = True) -> str:
    """int64 indices clamped into [-size, size - 1] and, with `wrap` (or when constant),
    wrapped into [0, size); `sizes` is one size or, for ND indices, one size per position of
    the last axis."""
    size = np.asarray(sizes, dtype=np.int64)
    if indices.kind == "constant" and indices.value is not None:
        clipped = np.clip(indices.value.astype(np.int64), -size, size - 1)
        return e.const(np.where(clipped < 0, clipped + size, clipped), "int64", "indices")
    idx = e.input(indices, "int64")
    if size.ndim == 0:
        idx = e.node("Clip", [idx, e.scalar(int(-size), "int64", "lo"),
                              e.scalar(int(size) - 1, "int64", "hi")], "int64")
    else:
        hi = e.const(size - 1, "int64", "hi")
        idx = e.node("Max", [e.node("Min", [idx, hi], "int64"), e.const(-size, "int64", "lo")],
                     "int64")
    if not wrap:
        return idx
    neg = e.node("Less", [idx, e.scalar(0, "int64")], "bool")
    wrapped = e.node("Add", [idx, e.const(size, "int64", "size")], "int64")
    return e.node("Where", [neg, wrapped, idx], "int64")


@lowering("gather")
def gather(e: Emitter, op: Operation) -> list[str]:
    x, indices = op.args
    axis = int(op.options["axis"])
    idx = normalized_indices(e, indices, x.shape[axis], wrap=False)
    return [e.node("Gather", [e.input(x), idx], x.data_type, axis=axis)]


@lowering("gatherElements")
def gather_elements(e: Emitter, op: Operation) -> list[str]:
    x, indices = op.args
    axis = int(op.options["axis"])
    idx = normalized_indices(e, indices, x.shape[axis], wrap=False)
    return [e.node("GatherElements", [e.input(x), idx], x.data_type, axis=axis)]


@lowering("gatherND")
def gather_nd(e: Emitter, op: Operation) -> list[str]:
    x, indices = op.args
    idx = normalized_indices(e, indices, x.shape[:indices.shape[-1]], wrap=False)
    return [e.node("GatherND", [e.input(x), idx], x.data_type)]


@lowering("scatterElements")
def scatter_elements(e: Emitter, op: Operation) -> list[str]:
    x, indices, updates = op.args
    axis = int(op.options["axis"])
    idx = normalized_indices(e, indices, x.shape[axis])
    return [e.node("ScatterElements", [e.input(x), idx, e.input(updates)], x.data_type,
                   axis=axis)]


@lowering("scatterND")
def scatter_nd(e: Emitter, op: Operation) -> list[str]:
    x, indices, updates = op.args
    idx = normalized_indices(e, indices, x.shape[:indices.shape[-1]])
    return [e.node("ScatterND", [e.input(x), idx, e.input(updates)], x.data_type)]
