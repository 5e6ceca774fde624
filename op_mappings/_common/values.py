"""Small conversions of constant inputs shared by the ONNX and TFLite handlers."""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.webnn import MLOperand
from converter.importer import ImportContext

MAX_INTS = 1 << 16
"""The most values `ints` turns into a Python list: what it reads are shapes, axes,
permutations, pads, begins and sizes, split sizes (a handful each). A hostile model can give
a 256 MiB constant there: as a Python list that is gigabytes and minutes, and any message
quoting it megabytes."""


def ints(value: Any, what: str = "the value") -> list[int]:
    """A constant or attribute as a list of Python ints; InvalidModel when it is not real
    numbers (absent, complex, strings), holds NaN or an infinity, or has more than
    `MAX_INTS` values."""
    arr = np.asarray(value)
    if arr.size > MAX_INTS:
        raise InvalidModel(f"{what} has {arr.size:,} values; a list of sizes, axes or "
                           f"indices has at most {MAX_INTS:,}")
    if arr.dtype.kind not in "biuf":
        kind = "absent" if value is None else f"of type {arr.dtype}"
        raise InvalidModel(f"{what} must be integers, it is {kind}")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise InvalidModel(f"{what} must be integers, it holds {arr[~np.isfinite(arr)][0]}")
    return [int(v) for v in arr.reshape(-1)]


def norm_axis(axis: int, rank: int, what: str = "axis", *, scalar_ok: bool = False) -> int:
    """An axis in [-rank, rank) as WebNN's unsigned axis; `scalar_ok` also accepts axis 0
    (and -0) for a rank-0 value (TFLite's kernels do). InvalidModel when out of range."""
    a = int(axis)
    if not -rank <= a < (max(rank, 1) if scalar_ok else rank):
        raise InvalidModel(f"{what} {a} is out of range for rank {rank}")
    return a + rank if a < 0 else a


def const_or_none(ctx: ImportContext, name: str) -> np.ndarray | None:
    """The constant value of `name`, or None when it is omitted or computed in the graph."""
    if name and ctx.is_constant(name):
        return np.asarray(ctx.const_value(name))
    return None


def scalar(ctx: ImportContext, value: float | int, data_type: str) -> MLOperand:
    """A 0-D constant operand of `data_type`."""
    return ctx.builder.constant(np.asarray(value).astype(data_type))
