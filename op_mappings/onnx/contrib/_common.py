"""Helpers shared by the contrib (com.microsoft) handlers of the optimizer-fusion families
(not a mapping module: no handlers here).

- `check_arity`: input/output counts and required inputs, as an InvalidModel naming them.
- `attr_int` / `attr_float` / `attr_epsilon` / `attr_floats` / `attr_str`: attributes with onnxruntime's
  schema defaults (the reader has no schema for these ops, so it fills none), type-checked.
- `float_operand`: an input operand that must be float32 or float16.
- `check_shape`: an operand of an exact shape (1-D gamma/beta/bias vectors and the like).
- `to_type`: a cast that is skipped when the operand already has the type.
- `fast_gelu`: onnxruntime's FastGelu formula, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedDataType
from converter.core.ir import Node
from converter.importer import ImportContext

FLOAT_TYPES = ("float32", "float16")


def check_arity(node: Node, inputs: tuple[int, int], outputs: tuple[int, int] = (1, 1),
                required: Sequence[int] | None = None) -> None:
    """InvalidModel unless the node has inputs[0]..inputs[1] inputs (the `required` ones
    present: by default the first inputs[0]) and outputs[0]..outputs[1] outputs."""
    lo, hi = inputs
    n = len(node.inputs)
    if not lo <= n <= hi:
        want = str(lo) if lo == hi else f"{lo} to {hi}"
        raise InvalidModel(f"{node.op_type} takes {want} inputs, the node has {n}")
    missing = [i for i in (range(lo) if required is None else required) if not node.input(i)]
    if missing:
        raise InvalidModel(f"{node.op_type} required input(s) {missing} are omitted")
    olo, ohi = outputs
    m = len(node.outputs)
    if not olo <= m <= ohi:
        want = str(olo) if olo == ohi else f"{olo} to {ohi}"
        raise InvalidModel(f"{node.op_type} has {want} outputs, the node has {m}")
    if not node.outputs[0]:
        raise InvalidModel(f"{node.op_type} output 0 is omitted")


def _attr(node: Node, name: str, default: Any) -> Any:
    if name in node.attrs:
        return node.attrs[name]
    if default is None:
        raise InvalidModel(f"{node.op_type} required attribute {name!r} is missing")
    return default


def attr_int(node: Node, name: str, default: int | None) -> int:
    """Integer attribute `name` (default None: required)."""
    value = _attr(node, name, default)
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise InvalidModel(f"{node.op_type} attribute {name!r} must be an int, got {value!r}")
    return int(value)


def attr_float(node: Node, name: str, default: float | None) -> float:
    """Float attribute `name` (an int value is accepted; default None: required)."""
    value = _attr(node, name, default)
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise InvalidModel(f"{node.op_type} attribute {name!r} must be a float, got {value!r}")
    out = float(value)
    if not math.isfinite(out):
        raise InvalidModel(f"{node.op_type} attribute {name!r} must be finite, got {out}")
    return out


def attr_epsilon(node: Node, default: float) -> float:
    """The `epsilon` attribute, which must be >= 0 (onnxruntime enforces it)."""
    eps = attr_float(node, "epsilon", default)
    if eps < 0:
        raise InvalidModel(f"{node.op_type} epsilon must be >= 0, got {eps}")
    return eps


def attr_floats(node: Node, name: str) -> list[float] | None:
    """List-of-floats attribute `name`, or None when absent."""
    if name not in node.attrs:
        return None
    value = node.attrs[name]
    items = value if isinstance(value, tuple | list) else (value,)
    try:
        return [float(v) for v in items]
    except (TypeError, ValueError):
        raise InvalidModel(f"{node.op_type} attribute {name!r} must be a list of floats, got "
                           f"{value!r}") from None


def attr_str(node: Node, name: str, default: str | None) -> str:
    """String attribute `name` (default None: required)."""
    value = _attr(node, name, default)
    if not isinstance(value, str):
        raise InvalidModel(f"{node.op_type} attribute {name!r} must be a string, got "
                           f"{value!r}")
    return value


def float_operand(ctx: ImportContext, node: Node, index: int, what: str) -> Any:
    """Operand of input `index`, which must be float32 or float16."""
    x = ctx.operand(node.inputs[index])
    if x.data_type not in FLOAT_TYPES:
        raise UnsupportedDataType(f"{node.op_type} {what} (input {index}) has data type "
                                  f"{x.data_type}; float32 or float16 is needed")
    return x


def check_shape(node: Node, x: Any, shape: Sequence[int], what: str) -> None:
    """InvalidModel unless operand `x` has exactly `shape`."""
    if list(x.shape) != list(shape):
        raise InvalidModel(f"{node.op_type} {what} has shape {list(x.shape)}, expected "
                           f"{list(shape)}")


def check_same_type(node: Node, items: Sequence[tuple[Any, str]]) -> None:
    """InvalidModel unless every operand of `items` ((operand, name) pairs; None skipped) has
    the data type of the first."""
    present = [(x, w) for x, w in items if x is not None]
    first, first_what = present[0]
    for x, what in present[1:]:
        if x.data_type != first.data_type:
            raise InvalidModel(f"{node.op_type} {what} has data type {x.data_type}, "
                               f"{first_what} has {first.data_type}")


def to_type(ctx: ImportContext, x: Any, data_type: str) -> Any:
    """`x` cast to `data_type` (no op when it already has it)."""
    return x if x.data_type == data_type else ctx.builder.cast(x, data_type)


def scalar(ctx: ImportContext, value: float, data_type: str) -> Any:
    """A 0-D constant operand."""
    return ctx.builder.constant(np.asarray(value, dtype=data_type))


def fast_gelu(ctx: ImportContext, x: Any) -> Any:
    """0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), in x's data type."""
    b, dt = ctx.builder, x.data_type
    cube = b.mul(b.mul(x, x), x)
    inner = b.mul(scalar(ctx, math.sqrt(2.0 / math.pi), dt),
                  b.add(x, b.mul(scalar(ctx, 0.044715, dt), cube)))
    return b.mul(b.mul(scalar(ctx, 0.5, dt), x), b.add(scalar(ctx, 1.0, dt), b.tanh(inner)))


def add_bias(ctx: ImportContext, node: Node, x: Any, index: int, what: str = "bias") -> Any:
    """x + input `index` (a 1-D vector of x's last dimension), or x when it is omitted."""
    name = node.input(index)
    if not name:
        return x
    if x.rank == 0:
        raise InvalidModel(f"{node.op_type} input is a scalar: a {what} needs a last dimension")
    bias = ctx.operand(name)
    check_shape(node, bias, [x.shape[-1]], what)
    check_same_type(node, [(x, "input"), (bias, what)])
    return ctx.builder.add(x, bias)
