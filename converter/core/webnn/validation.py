"""Shared validation steps of the spec's builder methods.

Every helper raises MLTypeError with a message that starts with the operator name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from converter.core.webnn import limits
from converter.core.webnn.dtypes import (
    ALL_DATA_TYPES,
    DATA_TYPES,
    MAX_DIMENSION,
    MAX_TENSOR_BYTE_LENGTH,
    MAX_TENSOR_COUNT,
)
from converter.core.webnn.errors import MLTypeError
from converter.core.webnn.operand import MLOperandDescriptor

UINT32_MAX = 2**32 - 1
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def fail(op: str, rule: str) -> MLTypeError:
    return MLTypeError(f"{op}: {rule}")


def unsigned(op: str, what: str, value: Any) -> int:
    """An [EnforceRange] unsigned long: an integer in [0, 2^32-1]."""
    if isinstance(value, bool) or not isinstance(value, (int,)) and not _is_int_like(value):
        raise fail(op, f"{what} must be an unsigned integer, got {value!r}")
    v = int(value)
    if not 0 <= v <= UINT32_MAX:
        raise fail(op, f"{what} ({v}) is outside the unsigned long range [0, {UINT32_MAX}]")
    return v


def signed(op: str, what: str, value: Any) -> int:
    """An [EnforceRange] long: an integer in [-2^31, 2^31-1]."""
    if isinstance(value, bool) or not isinstance(value, (int,)) and not _is_int_like(value):
        raise fail(op, f"{what} must be an integer, got {value!r}")
    v = int(value)
    if not INT32_MIN <= v <= INT32_MAX:
        raise fail(op, f"{what} ({v}) is outside the long range")
    return v


def _is_int_like(value: Any) -> bool:
    try:
        import numpy as np

        return isinstance(value, np.integer)
    except ImportError:  # pragma: no cover
        return False


def unsigned_list(op: str, what: str, values: Any, length: int | None = None) -> tuple[int, ...]:
    """A sequence<unsigned long>, optionally of an exact length."""
    if type(values) in (tuple, list) and all(
            type(v) is int and 0 <= v <= UINT32_MAX for v in values):
        out = tuple(values)  # what the item-by-item checks below would give
    else:
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) and not \
                hasattr(values, "__iter__"):
            raise fail(op, f"{what} must be a sequence of unsigned integers, got {values!r}")
        out = tuple(unsigned(op, f"{what} item", v) for v in values)
    if length is not None and len(out) != length:
        raise fail(op, f"{what} must have {length} items, got {len(out)}")
    return out


def dimension(op: str, what: str, value: int) -> int:
    """A valid dimension: an integer > 0 and <= 2^31-1."""
    if not 0 < value <= MAX_DIMENSION:
        raise fail(op, f"{what} ({value}) is not a valid dimension (1..{MAX_DIMENSION})")
    return value


def shape_of(op: str, what: str, values: Any) -> tuple[int, ...]:
    """A shape: a sequence of valid dimensions whose element count is a valid dimension."""
    dims = unsigned_list(op, what, values)
    count = 1
    for d in dims:
        if not 0 < d <= MAX_DIMENSION:
            dimension(op, f"{what} dimension", d)
        count *= d
    if count > MAX_DIMENSION:
        raise fail(op, f"{what} {list(dims)} has {count} elements, more than {MAX_DIMENSION}")
    return dims


def tensor_count(op: str, what: str, count: int) -> None:
    if not 0 < count <= MAX_TENSOR_COUNT:
        raise fail(op, f"{what} count ({count}) must be in 1..{MAX_TENSOR_COUNT}")


def enum(op: str, what: str, value: Any, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise fail(op, f"{what} {value!r} is not one of {', '.join(map(repr, allowed))}")
    return str(value)


def boolean(op: str, what: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise fail(op, f"{what} must be a boolean, got {value!r}")
    return value


def number(op: str, what: str, value: Any) -> float | int:
    """An MLNumber or double: any int or float (bool rejected)."""
    import numpy as np

    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise fail(op, f"{what} must be a number, got {value!r}")
    return value.item() if isinstance(value, np.generic) else value


def axis(op: str, what: str, value: Any, rank: int) -> int:
    a = unsigned(op, what, value)
    if a >= rank:
        raise fail(op, f"{what} ({a}) must be less than the input rank ({rank})")
    return a


def axes(op: str, what: str, values: Any, rank: int) -> tuple[int, ...]:
    """Unique axes, each < rank."""
    out = unsigned_list(op, what, values)
    for a in out:
        if a >= rank:
            raise fail(op, f"{what} item {a} must be less than the input rank ({rank})")
    if len(set(out)) != len(out):
        raise fail(op, f"{what} {list(out)} contains duplicate axes")
    return out


def bidirectional_broadcast(op: str, a: tuple[int, ...], b: tuple[int, ...],
                            what: str = "inputs") -> tuple[int, ...]:
    """The numpy broadcast of two shapes, or MLTypeError."""
    if a == b:
        return tuple(a)
    rank = max(len(a), len(b))
    pa = (1,) * (rank - len(a)) + tuple(a)
    pb = (1,) * (rank - len(b)) + tuple(b)
    out = []
    for x, y in zip(pa, pb, strict=True):
        if x != y and x != 1 and y != 1:
            raise fail(op, f"{what} shapes {list(a)} and {list(b)} are not broadcastable")
        out.append(max(x, y))
    return tuple(out)


def unidirectional_broadcast(op: str, src: tuple[int, ...], dst: tuple[int, ...],
                             what: str = "input") -> tuple[int, ...]:
    """Check `src` broadcasts to `dst` without changing `dst`; returns dst."""
    if len(src) > len(dst):
        raise fail(op, f"{what} shape {list(src)} has higher rank than {list(dst)}")
    padded = (1,) * (len(dst) - len(src)) + tuple(src)
    for s, d in zip(padded, dst, strict=True):
        if s != d and s != 1:
            raise fail(op, f"{what} shape {list(src)} is not broadcastable to {list(dst)}")
    return tuple(dst)


def same_type(op: str, role: str, data_type: str, ref_role: str, ref_type: str) -> None:
    if data_type != ref_type:
        raise fail(op, f"{role} data type {data_type} must equal {ref_role} data type {ref_type}")


def same_shape(op: str, role: str, shape: tuple[int, ...], expected: tuple[int, ...]) -> None:
    if tuple(shape) != tuple(expected):
        raise fail(op, f"{role} shape {list(shape)} must be {list(expected)}")


def descriptor(op: str, data_type: Any, shape: Any) -> MLOperandDescriptor:
    """Check a descriptor the way input()/constant() do and return it (the 4-bit types only
    for `constant`)."""
    constant = op == "constant"
    enum(op, "data type", data_type, ALL_DATA_TYPES if constant else DATA_TYPES)
    dims = shape_of(op, "shape", shape)
    desc = MLOperandDescriptor(data_type, dims)
    limits.check_io(op, desc.data_type, desc.rank, constant=constant)
    if desc.byte_length > MAX_TENSOR_BYTE_LENGTH:
        raise fail(op, f"byte length {desc.byte_length} exceeds {MAX_TENSOR_BYTE_LENGTH}")
    return desc
