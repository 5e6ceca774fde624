"""WebNN operand data types and the spec's number-cast rules.

The spec's `MLOperandDataType` has eight members; each maps to the numpy dtype of the same
name. int4/uint4 are not supported by this implementation. This module is the one truth for
these sets: the per-op limits table (`limits.py`), the importers and the feed conversion
(`converter.feeds`) derive theirs from it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

import numpy as np

DATA_TYPES: Final = ("float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8")
FLOAT_TYPES: Final = frozenset({"float32", "float16"})
INT_TYPES: Final = frozenset(DATA_TYPES) - FLOAT_TYPES
SIGNED_INT_TYPES: Final = frozenset({"int32", "int64", "int8"})

CARRIER_TYPES: Final[Mapping[str, str]] = MappingProxyType({"bool": "uint8",
                                                             "float64": "float32"})
"""Source data types WebNN lacks that still enter graphs, and the WebNN type that carries
them: bool values travel as uint8 (0/1) and float64 values are narrowed to float32. Every
other type WebNN lacks is unsupported."""

MAX_DIMENSION: Final = 2**31 - 1
MAX_TENSOR_BYTE_LENGTH: Final = 2**34
MAX_RANK: Final = 8
MAX_TENSOR_COUNT: Final = 8192


def numpy_dtype(data_type: str) -> np.dtype:
    """The numpy dtype of a WebNN data type name."""
    return np.dtype(data_type)


def data_type_of(dtype: np.dtype | type) -> str | None:
    """The WebNN data type name of a numpy dtype, or None when WebNN has no such type."""
    name = np.dtype(dtype).name
    return name if name in DATA_TYPES else None


def carrier_type(dtype: str) -> str | None:
    """The WebNN data type that carries values of source data type `dtype` inside a graph
    (`dtype` itself for WebNN types, see CARRIER_TYPES for the others), or None when WebNN
    cannot carry it."""
    if dtype in DATA_TYPES:
        return dtype
    return CARRIER_TYPES.get(dtype)


def item_size(data_type: str) -> int:
    return np.dtype(data_type).itemsize


def type_range(data_type: str) -> tuple[int, int]:
    """Smallest and largest value of an integer data type."""
    info = np.iinfo(np.dtype(data_type))
    return int(info.min), int(info.max)


def cast_number(value: float | int, data_type: str) -> float | int:
    """The spec's "cast" of an MLNumber (or double) to `data_type`.

    Floats: round to nearest, ties to even, overflow to +-Infinity; NaN and -0 kept.
    Integers: NaN -> 0, clamp to the type's range, then round half to even.
    Returns a Python number whose value is exactly representable in `data_type`.
    """
    if data_type in FLOAT_TYPES:
        with np.errstate(over="ignore"):
            return float(np.array(value, dtype=np.float64).astype(data_type))
    lo, hi = type_range(data_type)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return min(max(int(value), lo), hi)
    v = float(value)
    if math.isnan(v):
        return 0
    if v <= lo:
        return lo
    if v >= hi:
        return hi
    return int(round(v))  # Python's round() is half-to-even


def cast_array(values: np.ndarray, data_type: str) -> np.ndarray:
    """Element-wise `cast_number` of a numpy array (used for constants given as floats)."""
    arr = np.asarray(values)
    if data_type in FLOAT_TYPES or arr.dtype.kind in "iub":
        with np.errstate(over="ignore"):
            return arr.astype(data_type)
    lo, hi = type_range(data_type)
    a = np.nan_to_num(arr.astype(np.float64), nan=0.0, posinf=hi, neginf=lo)
    a = np.rint(np.clip(a, lo, hi))
    if data_type == "uint64" or data_type == "int64":
        # float64 cannot hold the extreme values exactly; clip after rounding in object space.
        out = np.array([min(max(int(v), lo), hi) for v in a.ravel()], dtype=data_type)
        return out.reshape(a.shape)
    return a.astype(data_type)
