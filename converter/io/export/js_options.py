"""Which recorded options the JavaScript export leaves out, and the JavaScript names of values.

Options: the builder records every option it resolved (`conv2d`'s `strides: [1, 1]`,
`groups: 1`, `inputLayout: "nchw"`, ...); the generated module writes only those that differ
from what the browser's `MLGraphBuilder` would take when the option is absent. The default
of an option comes from the builder itself, never from a list kept here: a keyword default
of the operator's method (`converter.core.webnn.ops`, found through the `Operator` table) is
the spec's default (`groups=1`, `alpha=1.0`, `layout="nchw"`); an option whose keyword
default is None (`padding`, `strides`, `windowDimensions`, `axes`, `permutation`, ...) has a
default the method computes from the inputs, so the operation is replayed on a scratch
builder without that option and the option is left out exactly when the replay records the
same value. Operand-valued options (`bias`, `c`, `scale`) are always written. A replay the
builder refuses keeps the option (written as recorded).

Names: the `.webnn` writer's identifiers (`converter.io.serialize.plan`: graph input and
output names sanitised, `const_<i>`, `<op>_<i>`) mapped to JavaScript identifiers: `.` and
`/` become `_`, reserved words and the module's own local names get a `_` suffix, and a
name already taken gets `_<n>`. The result is ASCII `[A-Za-z_$][A-Za-z0-9_$]*`, so it can
never end a string, close a `<script>` element or run code.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from typing import Any, cast

import numpy as np

from converter.core.webnn import MLContext, MLGraphBuilder, MLOperand, Operation
from converter.core.webnn.operators import OPERATORS

__all__ = ["JS_RESERVED", "js_identifiers", "written_options"]

JS_RESERVED = frozenset("""
    arguments await break case catch class const continue debugger default delete do else
    enum eval export extends false finally for function if implements import in instanceof
    interface let new null package private protected public return static super switch this
    throw true try typeof var void while with yield undefined NaN Infinity globalThis
    builder context weights graph model inputs outputs feeds compute destroy __proto__
    MLGraphBuilder Object Array ArrayBuffer DataView BigInt Number String Math JSON Promise
    Error TypeError RangeError Float16Array Float32Array Float64Array Int8Array Uint8Array
    Int16Array Uint16Array Int32Array Uint32Array BigInt64Array BigUint64Array
""".split())
"""JavaScript reserved words, the generated module's own local names and the globals its
functions use (a value named so would shadow them)."""

_MISSING = object()


def _freeze(value: Any) -> Any:
    """A hashable, type-faithful form of an option value (lists and tuples alike; bools
    apart from numbers; NaN never equal to anything)."""
    if isinstance(value, MLOperand):
        return ("operand", (value.data_type, tuple(value.shape)))
    if isinstance(value, (list, tuple)):
        return ("list", tuple(_freeze(v) for v in value))
    if isinstance(value, (bool, np.bool_)):
        return ("bool", bool(value))
    if isinstance(value, (int, np.integer)):
        return ("number", int(value))
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return ("nan", id(value)) if math.isnan(f) else ("number", f)
    return (type(value).__name__, value)


@functools.lru_cache(maxsize=4096)
def _replay_default(op: str, key: str, args: tuple[Any, ...], others: tuple[Any, ...]) -> Any:
    """What the builder records for option `key` of `op` when it is absent, the other
    arguments being `args` / `others` (frozen: operands as their descriptors); _MISSING when
    the builder records nothing or refuses the call."""
    builder = MLGraphBuilder(MLContext(cast(Any, None)))
    count = 0

    def thaw(frozen: Any) -> Any:
        nonlocal count
        kind, value = frozen
        if kind == "operand":
            count += 1
            return builder.input(f"x{count}", list(value[1]), value[0])
        if kind == "list":
            return [thaw(v) for v in value]
        return math.nan if kind == "nan" else value

    try:
        outs = builder.apply(op, [thaw(a) for a in args], {k: thaw(v) for k, v in others})
    except Exception:  # noqa: BLE001 - a refused replay keeps the option
        return _MISSING
    operation = outs[0].operator if outs else None
    if operation is None or key not in operation.options:
        return _MISSING
    return _freeze(operation.options[key])


def _is_default(operation: Operation, key: str, value: Any) -> bool:
    param = OPERATORS[operation.op].options.get(key)
    if param is None or isinstance(value, MLOperand):
        return False
    default = param.default
    if default is not None:
        return bool(_freeze(value) == _freeze(default))
    frozen = tuple((k, _freeze(v)) for k, v in operation.options.items()
                   if k != key and v is not None)
    args = tuple(_freeze(a) for a in operation.args)
    return bool(_replay_default(operation.op, key, args, frozen) == _freeze(value))


def written_options(operation: Operation) -> list[tuple[str, Any]]:
    """The (name, value) options of `operation` that the generated JavaScript writes: those
    not None and not equal to the builder's default (module docstring), in recorded order."""
    return [(key, value) for key, value in operation.options.items()
            if value is not None and not _is_default(operation, key, value)]


def js_identifiers(wanted: Iterable[tuple[int, str]]) -> dict[int, str]:
    """id(operand) -> a unique JavaScript identifier made from its `.webnn` identifier (module
    docstring), in the order given."""
    used: set[str] = set()
    out: dict[int, str] = {}
    for key, ident in wanted:
        base = "".join(c if c.isascii() and (c.isalnum() or c in "_$") else "_" for c in ident)
        if not base or base[0].isdigit():
            base = "_" + base
        if base in JS_RESERVED:
            base += "_"
        name, n = base, 0
        while name in used:
            n += 1
            name = f"{base}_{n}"
        used.add(name)
        out[key] = name
    return out
