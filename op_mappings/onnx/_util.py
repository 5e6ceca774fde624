"""Helpers shared by ONNX handlers (not a mapping module: no handlers here). `ints` and
`norm_axis` are the ones TFLite handlers use too (`op_mappings/_common/values.py`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from converter.core.errors import InvalidModel
from converter.importer import ImportContext
from op_mappings._common.values import ints, norm_axis

__all__ = ["empty_value", "ints", "norm_axes", "norm_axis", "np_dtype"]


def norm_axes(axes: Sequence[int] | np.ndarray, rank: int, what: str = "axes") -> list[int]:
    out = [norm_axis(a, rank, what) for a in ints(axes, what)]
    if len(set(out)) != len(out):
        raise InvalidModel(f"{what} {list(out)} repeats an axis")
    return out


def np_dtype(code: int, what: str = "data type") -> np.dtype:
    """The numpy dtype of ONNX element type `code` (an attribute such as Cast's `to`);
    InvalidModel when `code` is no ONNX type or has no numpy equivalent."""
    from onnx import helper

    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(int(code)))
    except (KeyError, ValueError, TypeError):
        raise InvalidModel(f"{what} {code} is not an ONNX data type numpy has") from None


def empty_value(ctx: ImportContext, name: str, shape: Sequence[int]) -> np.ndarray:
    """A zero-size result of `shape` with the source type of value `name` (bool for a bool
    carried as uint8; int4/uint4 widen to int8/uint8). Handlers return it for a result with
    no elements: its value is known at conversion time, so it is a constant (WebNN operands
    cannot be empty); Concat drops it and the nodes reading it fold."""
    if 0 not in shape:
        raise ValueError(f"shape {list(shape)} is not empty")
    dtype = "bool" if ctx.is_bool(name) else ctx.dtype(name)
    dtype = {"int4": "int8", "uint4": "uint8"}.get(dtype, dtype)
    return np.zeros([int(d) for d in shape], dtype=dtype)
