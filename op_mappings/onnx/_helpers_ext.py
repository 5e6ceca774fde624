"""Helpers for the complex/decomposed ONNX mappings (not a mapping module: no handlers here).

- `const_or_none`: the numpy value of an input when it is a constant, else None (shared with
  the TFLite handlers: `op_mappings/_common/values.py`).
- `scalar`: a scalar constant operand of a given data type (shared, as `const_or_none`).
- `take`: rows/columns of a (possibly constant) input as an operand, sliced with numpy when
  the input is constant so that no WebNN op is emitted for it.
- `float_dtype_check`: reject non-float operands for float-only decompositions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from converter.core.errors import UnsupportedDataType
from converter.core.ir import Node
from converter.core.webnn.dtypes import FLOAT_TYPES
from converter.importer import ImportContext
from op_mappings._common.values import const_or_none, scalar

__all__ = ["const_or_none", "float_dtype_check", "scalar", "take"]


def take(ctx: ImportContext, name: str, index: Sequence[int | slice]) -> Any:
    """`value[index]` (basic numpy indexing: ints drop a dimension, slices with step 1 keep
    it) as an operand: a constant when the input is constant, else slice + reshape."""
    value = const_or_none(ctx, name)
    if value is not None:
        arr = np.ascontiguousarray(value[tuple(index)])
        return ctx.constant(arr, what=f"part of {name!r}")
    x = ctx.operand(name)
    starts, sizes, keep = [], [], []
    full = list(index) + [slice(None)] * (x.rank - len(index))
    for dim, item in zip(x.shape, full, strict=True):
        if isinstance(item, slice):
            start, stop, step = item.indices(dim)
            if step != 1:
                raise ValueError("take: slices must have step 1")
            starts.append(start)
            sizes.append(stop - start)
            keep.append(stop - start)
        else:
            starts.append(int(item) % dim)
            sizes.append(1)
    b = ctx.builder
    out = x if starts == [0] * x.rank and list(sizes) == list(x.shape) else b.slice(
        x, starts, sizes)
    if list(out.shape) != keep:
        out = b.reshape(out, keep)
    return out


def float_dtype_check(node: Node, operand: Any, what: str = "input") -> None:
    """Raise UnsupportedDataType unless `operand` is float32 or float16."""
    if operand.data_type not in FLOAT_TYPES:
        raise UnsupportedDataType(f"{node.op_type} {what} has data type {operand.data_type}; "
                                  "this mapping needs float32 or float16")
