"""Rules for the gather ops Chromium's LiteRT backend refuses: gatherElements with indices
computed at run time (see `converter.passes.targets.passes`)."""

from __future__ import annotations

import numpy as np

from converter.core.webnn import MLOperand
from converter.core.webnn.operand import Operation
from converter.passes.targets.rewrite import Rewrite, rule

INT32_MAX = 2**31 - 1


def _index_type(rw: Rewrite, elements: int) -> str:
    """int32 where every linear position of the flattened input fits (and the target's gather
    takes it), else int64."""
    if elements - 1 <= INT32_MAX and rw.supports("gather", "indices", "int32"):
        return "int32"
    return "int64"


@rule("gatherelements-indices", "gatherElements",
      why="Chromium (LiteRT) builds gatherElements only with constant indices")
def gatherelements_indices(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """gatherElements with indices computed at run time: gather on the flattened input at
    linear positions `base + index * stride(axis)`, where `base` (a constant) is each output
    position's linear position with its `axis` coordinate 0. The indices are first brought
    into [0, size - 1] as the reference runtime does (clamped into [-size, size - 1], negative
    ones counted from the end; uint32 ones clamped as int64), so the flattened gather never
    reads another row; the positions are int32 when the input has fewer than 2^31 elements."""
    x, idx = operation.args
    if idx.kind == "constant":
        return None
    axis = int(operation.options["axis"])
    size = int(x.shape[axis])
    shape = list(idx.shape)
    elements = int(np.prod(x.shape, dtype=np.int64))
    itype = _index_type(rw, elements)
    strides = np.cumprod([1, *x.shape[::-1]], dtype=np.int64)[-2::-1]  # row-major strides
    base = np.zeros(shape, np.int64)
    for j, coords in enumerate(np.indices(shape, dtype=np.int64)):
        if j != axis:
            base += coords * strides[j]
    # clamp and wrap in a type holding every index value, then narrow
    wide = "int64" if idx.data_type == "uint32" else idx.data_type
    i = rw.cast(idx, wide)
    if idx.data_type != "uint32":  # clamp below at -size, count negatives from the end
        i = rw.emit1("max", i, rw.const(np.array(-size), wide))
        negative = rw.emit1("lesser", i, rw.const(np.array(0), wide))
        i = rw.emit1("where", negative, rw.emit1("add", i, rw.const(np.array(size), wide)), i)
    i = rw.cast(rw.emit1("min", i, rw.const(np.array(size - 1), wide)), itype)
    if int(strides[axis]) != 1:
        i = rw.emit1("mul", i, rw.const(np.array(int(strides[axis])), itype))
    if np.any(base):
        i = rw.emit1("add", i, rw.const(base, itype))
    flat = rw.emit1("reshape", x, [elements])
    label = operation.options.get("label")
    rw.note("gatherelements-indices", "run-time indices: gather on the flattened input")
    return [rw.emit1("gather", flat, i, axis=0, **({"label": label} if label else {}))]
