"""WebNN operand data types and the spec's number-cast rules.

The spec's `MLOperandDataType` has eight members; each maps to the numpy dtype of the same
name. This module is the one truth for these sets: the per-op limits table (`limits.py`), the
importers and the feed conversion (`converter.core.feeds`) derive theirs from it.

4-bit types: "int4" and "uint4" (Chromium's and the WPT's optional data types, not in the
spec enum) are supported for constants and for the operands of dequantizeLinear /
quantizeLinear that the limits table allows (see `limits.py`); graph inputs cannot have them,
graph outputs only on a backend that lists them (`output_data_types`: the reference backend,
whose graph returns the storage array described next). In memory (constant values, runtime arrays) a 4-bit operand is a numpy
array of its storage type (`STORAGE_TYPES`: int8 holding values in [-8, 7], uint8 holding
values in [0, 15]), one value per byte; `numpy_dtype` gives that storage dtype. Their byte
length (`byte_length`) is the packed one, two values per byte with the first value in the
low nibble (as Chromium, the WPT harness and ONNX pack them); `pack_4bit` / `unpack_4bit`
convert between the two, and the serializers write the packed bytes.
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

FOUR_BIT_TYPES: Final = ("int4", "uint4")
"""The optional 4-bit data types (constants and (de)quantization operands only)."""
ALL_DATA_TYPES: Final = DATA_TYPES + FOUR_BIT_TYPES
"""Every data type an operand can have: the spec's eight and the 4-bit types."""
STORAGE_TYPES: Final[Mapping[str, str]] = MappingProxyType({"int4": "int8", "uint4": "uint8"})
"""The numpy dtype that holds the values of a 4-bit data type, one value per byte."""
_FOUR_BIT_RANGES: Final[Mapping[str, tuple[int, int]]] = MappingProxyType(
    {"int4": (-8, 7), "uint4": (0, 15)})

CARRIER_TYPES: Final[Mapping[str, str]] = MappingProxyType({"bool": "uint8",
                                                             "float64": "float32"})
"""Source data types WebNN lacks that still enter graphs, and the WebNN type that carries
them: bool values travel as uint8 (0/1) and float64 values are narrowed to float32. Every
other type WebNN lacks is unsupported."""

NARROWED_TYPES: Final[Mapping[str, str]] = MappingProxyType({"int64": "int32",
                                                              "uint64": "uint32"})
"""64-bit integer types and the 32-bit type a target without them computes in
(`converter.passes.targets` rule narrow-int64): exact while the values fit, which the converter
checks for constants and the feeds (`converter.core.feeds`) for inputs."""

MAX_DIMENSION: Final = 2**31 - 1
MAX_TENSOR_BYTE_LENGTH: Final = 2**34
MAX_RANK: Final = 8
MAX_TENSOR_COUNT: Final = 8192


_STORAGE_DTYPES: Final[Mapping[str, np.dtype]] = MappingProxyType(
    {t: np.dtype(STORAGE_TYPES.get(t, t)) for t in ALL_DATA_TYPES})
_DTYPE_NAMES: dict[np.dtype, str] = {}
"""numpy dtype -> its name, filled as dtypes are met (`dtype.name` is computed in Python by
numpy on every read; the builder and the importers ask for it per operand)."""


def numpy_dtype(data_type: str) -> np.dtype:
    """The numpy dtype that holds values of a WebNN data type (the storage type of the 4-bit
    types, see `STORAGE_TYPES`)."""
    dtype = _STORAGE_DTYPES.get(data_type)
    return dtype if dtype is not None else np.dtype(STORAGE_TYPES.get(data_type, data_type))


def dtype_name(dtype: np.dtype) -> str:
    """`dtype.name` (cached per dtype)."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = dtype.name
    return name


def data_type_of(dtype: np.dtype | type) -> str | None:
    """The WebNN data type name of a numpy dtype, or None when WebNN has no such type.
    The 4-bit dtypes of `ml_dtypes` (which `onnx` uses for INT4/UINT4 tensors) are named
    "int4" / "uint4"."""
    name = dtype_name(np.dtype(dtype))
    return name if name in ALL_DATA_TYPES else None


def carrier_type(dtype: str, *, constant: bool = False) -> str | None:
    """The WebNN data type that carries values of source data type `dtype` inside a graph
    (`dtype` itself for WebNN types, see CARRIER_TYPES for the others), or None when WebNN
    cannot carry it. The 4-bit types are carried only by constants (`constant=True`)."""
    if dtype in DATA_TYPES or (constant and dtype in FOUR_BIT_TYPES):
        return dtype
    return CARRIER_TYPES.get(dtype)


def item_size(data_type: str) -> int:
    """Bytes per element in memory (the storage type's size for the 4-bit types)."""
    return numpy_dtype(data_type).itemsize


def byte_length(data_type: str, count: int) -> int:
    """Bytes of `count` packed elements: two per byte for the 4-bit types (rounded up)."""
    if data_type in FOUR_BIT_TYPES:
        return (count + 1) // 2
    dtype = _STORAGE_DTYPES.get(data_type)
    return count * (dtype if dtype is not None else np.dtype(data_type)).itemsize


def type_range(data_type: str) -> tuple[int, int]:
    """Smallest and largest value of an integer data type."""
    if data_type in _FOUR_BIT_RANGES:
        return _FOUR_BIT_RANGES[data_type]
    info = np.iinfo(np.dtype(data_type))
    return int(info.min), int(info.max)


def to_storage(values: np.ndarray, data_type: str) -> np.ndarray:
    """Integer `values` as the storage array of 4-bit type `data_type` (int8 / uint8); a
    numpy array of the `ml_dtypes` 4-bit types is accepted. ValueError when a value lies
    outside the type's range."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "iub" and arr.dtype.name not in FOUR_BIT_TYPES:
        raise ValueError(f"{data_type} values must be integers, got {arr.dtype}")
    wide = arr.astype(np.int64)
    lo, hi = type_range(data_type)
    if wide.size and (int(wide.min()) < lo or int(wide.max()) > hi):
        raise ValueError(f"{data_type} values must lie in [{lo}, {hi}], got "
                         f"[{int(wide.min())}, {int(wide.max())}]")
    storage = numpy_dtype(data_type)
    return arr if arr.dtype == storage else wide.astype(storage)


def pack_4bit(values: np.ndarray) -> bytes:
    """The packed bytes of 4-bit values (int8 or uint8 storage, any shape, row-major): two
    per byte, the first value in the low nibble; an odd count leaves the last high nibble 0."""
    flat = np.ascontiguousarray(values).reshape(-1).view(np.uint8) & 0x0F
    if flat.size % 2:
        flat = np.concatenate([flat, np.zeros(1, np.uint8)])
    pairs = flat.reshape(-1, 2)
    return (pairs[:, 0] | (pairs[:, 1] << 4)).astype(np.uint8).tobytes()


def unpack_4bit(data: bytes | bytearray | memoryview | np.ndarray, data_type: str,
                shape: tuple[int, ...] | list[int]) -> np.ndarray:
    """The storage array (int8 / uint8, one value per byte) of packed 4-bit bytes `data`
    holding `shape`'s element count (inverse of `pack_4bit`; int4 nibbles are sign-extended).
    ValueError when the byte count is not the packed length."""
    raw = np.frombuffer(bytes(data), np.uint8) if not isinstance(data, np.ndarray) \
        else np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    count = int(np.prod(shape, dtype=np.int64))
    if raw.size != byte_length(data_type, count):
        raise ValueError(f"{data_type}{list(shape)} needs {byte_length(data_type, count)} "
                         f"packed bytes, got {raw.size}")
    nibbles = np.empty(raw.size * 2, np.uint8)
    nibbles[0::2] = raw & 0x0F
    nibbles[1::2] = raw >> 4
    values = nibbles[:count]
    if data_type == "int4":
        out = values.astype(np.int8)
        out[out > 7] -= 16
        return out.reshape(shape)
    return values.reshape(shape).copy()


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
    if data_type in FOUR_BIT_TYPES:
        lo, hi = type_range(data_type)
        a = np.nan_to_num(arr.astype(np.float64), nan=0.0, posinf=hi, neginf=lo)
        return np.rint(np.clip(a, lo, hi)).astype(numpy_dtype(data_type))
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
