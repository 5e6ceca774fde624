"""The value codec of the host-steps JSON form (`converter.results.host_steps`): data types,
tensors as little-endian base64, non-finite floats as words, and `Reader`, the checking
reader of a parsed document that never raises anything but a one-line `HostStepsError` and
allocates nothing over its `Limits`.
"""

from __future__ import annotations

import base64
import binascii
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

DATA_TYPES: dict[str, np.dtype[Any]] = {
    name: np.dtype(name).newbyteorder("<") for name in (
        "float32", "float16", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32",
        "int64", "uint64", "bool")}
"""The data types of constants and tensor attributes (WebNN/ONNX lower-case names), as
little-endian numpy dtypes."""

_INT64 = (-(1 << 63), (1 << 63) - 1)
_FLOAT_WORDS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


class HostStepsError(ValueError):
    """A malformed host-steps record or JSON form (one line naming the field)."""


@dataclass(frozen=True)
class Limits:
    """The bounds `HostSteps.from_json` enforces (a file over them is refused, nothing
    allocated); `nodes` counts the nodes of subgraphs too."""

    nodes: int = 100_000
    name_chars: int = 1_024
    node_arity: int = 1_024
    attributes: int = 256
    list_items: int = 1_000_000
    rank: int = 16
    tensor_bytes: int = 1 << 30
    total_bytes: int = 2 << 30
    nesting: int = 8


LIMITS = Limits()


def type_name(dtype: np.dtype[Any]) -> str | None:
    """The JSON name of a numpy dtype, None when host steps do not carry it."""
    name = dtype.name
    return name if name in DATA_TYPES else None


def tensor_json(arr: np.ndarray) -> dict[str, Any]:
    """{"dataType", "shape", "base64"} of an array of a `DATA_TYPES` type."""
    name = type_name(arr.dtype)
    if name is None:
        raise HostStepsError(f"host steps: data type {arr.dtype} is not one of "
                             f"{', '.join(DATA_TYPES)}")
    data = np.ascontiguousarray(arr, dtype=DATA_TYPES[name]).tobytes()
    return {"dataType": name, "shape": list(arr.shape),
            "base64": base64.b64encode(data).decode("ascii")}


def float_json(x: float) -> float | str:
    """`x`, or "NaN" / "Infinity" / "-Infinity"."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def where(what: str, problem: str) -> HostStepsError:
    return HostStepsError(f"host steps: {what}: {problem}")


class Reader:
    """Checked reading of a parsed JSON document within `limits`; counts the tensor bytes
    decoded and the nodes read so far against them."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.bytes = 0
        self.nodes = 0

    def obj(self, value: Any, what: str, keys: tuple[str, ...] = ()) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise where(what, f"expected an object, got {type(value).__name__}")
        missing = [k for k in keys if k not in value]
        if missing:
            raise where(what, f"missing {', '.join(missing)}")
        return value

    def list(self, value: Any, what: str, most: int) -> list[Any]:
        if not isinstance(value, list):
            raise where(what, f"expected a list, got {type(value).__name__}")
        if len(value) > most:
            raise where(what, f"{len(value)} items, over the limit of {most}")
        return value

    def name(self, value: Any, what: str, empty: bool = False) -> str:
        if not isinstance(value, str):
            raise where(what, f"expected a string, got {type(value).__name__}")
        if len(value) > self.limits.name_chars:
            raise where(what, f"name longer than {self.limits.name_chars} characters")
        if not value and not empty:
            raise where(what, "empty name")
        if any(ord(c) < 32 for c in value):
            raise where(what, "name holds control characters")
        return value

    def int(self, value: Any, what: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise where(what, f"expected an integer, got {type(value).__name__}")
        if not _INT64[0] <= value <= _INT64[1]:
            raise where(what, "integer outside the int64 range")
        return value

    def float(self, value: Any, what: str) -> float:
        if isinstance(value, str) and value in _FLOAT_WORDS:
            return _FLOAT_WORDS[value]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise where(what, f"expected a number, got {type(value).__name__}")
        return float(value)

    def tensor(self, value: Any, what: str) -> np.ndarray:
        limits = self.limits
        obj = self.obj(value, what, ("dataType", "shape", "base64"))
        dtype = DATA_TYPES.get(obj["dataType"]) if isinstance(obj["dataType"], str) else None
        if dtype is None:
            raise where(what, f"unknown dataType {str(obj['dataType'])[:40]!r}")
        shape = tuple(self.int(d, f"{what} shape")
                      for d in self.list(obj["shape"], f"{what} shape", limits.rank))
        if any(d < 0 for d in shape):
            raise where(what, f"negative dimension in shape {list(shape)}")
        nbytes = dtype.itemsize
        for d in shape:
            nbytes *= d
            if nbytes > limits.tensor_bytes:
                raise where(what, f"shape {list(shape)} is over the limit of "
                                  f"{limits.tensor_bytes} bytes")
        self.bytes += nbytes
        if self.bytes > limits.total_bytes:
            raise where(what, f"tensors over the total limit of {limits.total_bytes} bytes")
        text = obj["base64"]
        if not isinstance(text, str) or len(text) != 4 * ((nbytes + 2) // 3):
            raise where(what, f"base64 data does not hold the {nbytes} bytes of "
                              f"{obj['dataType']}{list(shape)}")
        try:
            data = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise where(what, "bad base64 data") from None
        if len(data) != nbytes:
            raise where(what, f"base64 data holds {len(data)} bytes, {obj['dataType']}"
                              f"{list(shape)} needs {nbytes}")
        return np.frombuffer(data, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="))

    def count_node(self, what: str) -> None:
        self.nodes += 1
        if self.nodes > self.limits.nodes:
            raise where(what, f"over the limit of {self.limits.nodes} nodes")
