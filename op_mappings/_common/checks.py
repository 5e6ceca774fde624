"""Input validation shared by the ONNX and TFLite handlers: a model comes from a stranger, so
a handler checks what it reads before computing with it, and a bad node is a one-line
conversion error saying what is wrong (the importer adds the node's op type, name and
version), never an exception from numpy or Python. (Input/output counts, required inputs and
attribute types are checked before the handler runs: by the ONNX importer against the op's
schema, `converter/frontends/onnx/nodecheck.py`; by the TFLite importer per op.)

- `check_rank`: a value of one of the allowed ranks.
- `check_dtype`: a value of one of the allowed data types (`UnsupportedDataType`).
- `require_attrs`: attributes an op cannot do without (where its schema calls them
  optional, or it has no schema).
- `attr_in_range`: a numeric attribute within bounds.
- `int_list`: an attribute or constant as a list of integers of a given length, each within
  bounds (kernel shapes, strides, per-input axes).
- `finite_scalar`: a constant input holding exactly one finite number.
- `static_shape`: a constant input that is a shape (1-D, integers, no negative sizes).
- `one_value`: an array (attribute or constant) holding exactly one number.
- `check_indices`: constant indices within [-size, size) of the axis they index.

Every check raises `InvalidModel` unless its docstring says otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedDataType
from converter.core.ir import Node
from converter.importer import ImportContext
from op_mappings._common.values import ints


def _rank(x: Any) -> int:
    if isinstance(x, tuple | list):
        return len(x)
    return len(tuple(np.shape(x) if isinstance(x, np.ndarray) else x.shape))


def check_rank(x: Any, ranks: int | Collection[int], what: str) -> int:
    """The rank of `x` (an operand, an array, or a shape as a tuple or list), which must be
    `ranks` (one rank, or a collection such as `range(1, 5)`)."""
    allowed = (ranks,) if isinstance(ranks, int) else ranks
    r = _rank(x)
    if r not in allowed:
        if isinstance(allowed, range) and allowed.step == 1 and len(allowed):
            lo, hi = allowed.start, allowed.stop - 1
            want = str(lo) if lo == hi else f"{lo} to {hi}"
        else:
            want = " or ".join(str(a) for a in allowed)
        raise InvalidModel(f"{what} has rank {r}, {want} expected")
    return r


def check_dtype(x: Any, allowed: Collection[str], what: str) -> str:
    """The data type of `x` (an operand's WebNN type or an array's numpy type), which must be
    one of `allowed`; `UnsupportedDataType` otherwise."""
    dt = x.data_type if hasattr(x, "data_type") else np.asarray(x).dtype.name
    if dt not in allowed:
        raise UnsupportedDataType(f"{what} has data type {dt}; {', '.join(sorted(allowed))} "
                                  "expected")
    return str(dt)


def require_attrs(node: Node, *names: str) -> None:
    """Every attribute in `names` is present."""
    missing = [n for n in names if n not in node.attrs]
    if missing:
        raise InvalidModel(f"required attribute(s) {missing} of {node.op_type} are missing")


def attr_in_range(node: Node, name: str, lo: float | None = None,
                  hi: float | None = None) -> Any:
    """Numeric attribute `name` (present: the reader fills defaults), a finite number within
    [lo, hi] (None: unbounded)."""
    if name not in node.attrs:
        raise InvalidModel(f"required attribute {name!r} of {node.op_type} is missing")
    value = node.attrs[name]
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise InvalidModel(f"attribute {name!r} must be a number, got {value!r}")
    if not math.isfinite(float(value)) or (lo is not None and value < lo) or (
            hi is not None and value > hi):
        bounds = (f"in [{lo}, {hi}]" if lo is not None and hi is not None
                  else f">= {lo}" if lo is not None else f"<= {hi}" if hi is not None
                  else "finite")
        raise InvalidModel(f"attribute {name!r} is {value}, it must be {bounds}")
    return value


def int_list(value: Any, what: str, count: int | None = None, minimum: int | None = None
             ) -> list[int]:
    """`value` (an attribute or constant) as Python ints: `count` of them (None: any number),
    each >= `minimum` (None: any)."""
    out = ints(value, what)
    if count is not None and len(out) != count:
        raise InvalidModel(f"{what} {out} has {len(out)} entries, {count} expected")
    if minimum is not None and any(v < minimum for v in out):
        raise InvalidModel(f"{what} {out} has an entry below {minimum}")
    return out


def one_value(value: Any, what: str) -> np.ndarray:
    """`value` (an array or attribute) as a 0-D array; it must hold exactly one element."""
    arr = np.asarray(value)
    if arr.size != 1:
        raise InvalidModel(f"{what} must hold one value, it has {arr.size} "
                           f"(shape {list(arr.shape)})")
    return arr.reshape(())


def finite_scalar(ctx: ImportContext, node: Node, index: int, what: str) -> np.ndarray:
    """The constant value of input `index` as a 0-D array: exactly one element, a finite
    number (NaN and infinities are refused)."""
    arr = one_value(ctx.const_input(node, index), f"{what} (input {index})")
    if arr.dtype.kind not in "biuf":
        raise InvalidModel(f"{what} (input {index}) must be a number, it is {arr.dtype}")
    if arr.dtype.kind == "f" and not np.isfinite(arr):
        raise InvalidModel(f"{what} (input {index}) is {float(arr)}, it must be finite")
    return arr


def static_shape(ctx: ImportContext, node: Node, index: int, what: str = "shape",
                 *, minimum: int = 0) -> list[int]:
    """The constant value of input `index` read as a shape: a 1-D (or scalar) integer
    tensor whose entries are >= `minimum`."""
    arr = np.asarray(ctx.const_input(node, index))
    if arr.ndim > 1:
        raise InvalidModel(f"{what} (input {index}) must be 1-D, it has shape "
                           f"{list(arr.shape)}")
    if arr.dtype.kind not in "iu" and arr.size:
        raise InvalidModel(f"{what} (input {index}) must hold integers, it is {arr.dtype}")
    dims = [int(d) for d in arr.reshape(-1)]
    bad = [d for d in dims if d < minimum]
    if bad:
        raise InvalidModel(f"{what} (input {index}) {dims} has a size below {minimum}")
    return dims


def check_indices(indices: Any, size: int, what: str = "indices") -> np.ndarray:
    """`indices` (a constant) as int64, every one an integer within [-size, size) (negative
    ones count from the end)."""
    arr = np.asarray(indices)
    if arr.dtype.kind not in "iu" and arr.size:
        raise InvalidModel(f"{what} must be integers, they are {arr.dtype}")
    if arr.size and (np.any(arr < -size) or np.any(arr >= size)):
        bad = arr[(arr < -size) | (arr >= size)].reshape(-1)[0]
        raise InvalidModel(f"{what} hold {int(bad)}, outside [-{size}, {size}) for an axis of "
                           f"size {size}")
    return arr.astype(np.int64)
