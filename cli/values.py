"""The values the options read, checked before anything is allocated: --dim, --free-dim,
--shape and --pin (`conversion_kwargs` turns them into the keyword arguments of
`converter.convert()`), `.npz` inputs and `.npy` pins (headers checked against the
budgets first), tolerances."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from typing import Any

import click
import numpy as np

from cli.output import CommandError, given_budgets
from converter.api import NotRegularFile, exception_text, format_bytes, open_regular, quoted

# -- option parsing -----------------------------------------------------------------------


def _split(option: str, item: str) -> tuple[str, str]:
    name, sep, value = item.partition("=")
    if not sep or not name:
        raise click.BadParameter(f"{item!r}: expected NAME=VALUE", param_hint=option)
    return name, value


def parse_dims(items: Sequence[str], *, named_only: bool = False
               ) -> tuple[dict[str, int], dict[str, dict[int, int]]]:
    """--dim NAME=VALUE (a named free dimension) or --dim INPUT:AXIS=VALUE (one axis of an
    input, e.g. an unnamed dimension); VALUE a positive integer, AXIS an integer (negative
    counts from the end). With `named_only` (--free-dim) every NAME is a dimension name,
    also one of the INPUT:AXIS form. Returns (free_dims, input_dims)."""
    option = "--free-dim" if named_only else "--dim"
    named: dict[str, int] = {}
    axes: dict[str, dict[int, int]] = {}
    for item in items:
        name, value = _split(option, item)
        n = _dim_value(value)
        if n is None:
            raise click.BadParameter(f"{item!r}: VALUE must be a positive integer (at most "
                                     f"{MAX_DIM})", param_hint=option)
        target, sep, axis = name.rpartition(":")
        if named_only or not sep or not target or not _is_int(axis):
            if named.get(name, n) != n:
                raise click.BadParameter(f"{item!r}: {name!r} is given twice "
                                         f"({named[name]} and {n})", param_hint=option)
            named[name] = n
            continue
        per_input = axes.setdefault(target, {})
        if per_input.get(int(axis), n) != n:
            raise click.BadParameter(f"{item!r}: axis {axis} of {target!r} is given twice "
                                     f"({per_input[int(axis)]} and {n})", param_hint=option)
        per_input[int(axis)] = n
    return named, axes


def _is_int(text: str) -> bool:
    digits = text[1:] if text.startswith("-") else text
    return digits.isascii() and digits.isdigit() and len(digits) <= 18


def _dim_value(text: str) -> int | None:
    """A dimension size (ASCII digits, 1 to MAX_DIM), None when it is not one."""
    text = text.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        return None
    n = int(text)
    return n if 1 <= n <= MAX_DIM else None


def parse_shapes(items: Sequence[str]) -> dict[str, list[int]]:
    """--shape INPUT=D1,D2,... (positive integers; INPUT= for a scalar)."""
    out: dict[str, list[int]] = {}
    for item in items:
        name, value = _split("--shape", item)
        dims = [_dim_value(d) for d in value.split(",")] if value.strip() else []
        if any(d is None for d in dims):
            raise click.BadParameter(f"{item!r}: dimensions must be positive integers (at "
                                     f"most {MAX_DIM}) separated by commas",
                                     param_hint="--shape")
        out[name] = [int(d) for d in dims if d is not None]
    return out


def parse_pins(items: Sequence[str]) -> dict[str, Any]:
    """--pin INPUT=VALUE: a number, a comma-separated or JSON list (rectangular, nested at
    most MAX_PIN_DEPTH deep; numbers only: integers within int64/uint64, finite floats,
    NaN/Infinity spelled so, true/false), or @FILE.npy (one numeric array, never pickles)."""
    out: dict[str, Any] = {}
    for item in items:
        name, value = _split("--pin", item)
        try:
            if value.startswith("@"):
                out[name] = _npy(value[1:])
            elif value.strip().startswith("["):
                out[name] = _array(_json_number(value.strip()))
            else:
                parts = [_json_number(p.strip(), scalar=True) for p in value.split(",")]
                out[name] = _array(parts[0] if len(parts) == 1 else parts)
        except ValueError as exc:
            raise click.BadParameter(f"{_shown(item)}: VALUE must be a number, a list of "
                                     f"numbers or @FILE.npy ({exception_text(exc)})",
                                     param_hint="--pin") from None
    return out


MAX_DIM = 2**31 - 1
"""The largest dimension --dim / --shape accept."""
MAX_PIN_DEPTH = 32
"""How deep --pin lists may nest."""
NUMERIC_KINDS = "biuf"
"""numpy dtype kinds of the arrays --inputs and --pin accept: bool, integers, floats."""


def _shown(text: str) -> str:
    return quoted(text)


def _json_number(text: str, *, scalar: bool = False) -> Any:
    """A JSON number or (unless `scalar`) a nested list of numbers; ValueError otherwise."""
    depth = deepest = 0
    for ch in text:
        if ch == "[":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == "]":
            depth -= 1
    if deepest > MAX_PIN_DEPTH:
        raise ValueError(f"lists nested deeper than {MAX_PIN_DEPTH} levels")
    if scalar and deepest:
        raise ValueError(f"{_shown(text)} is not a number (write a nested list as JSON: "
                         "[[1, 2], [3, 4]])")
    try:
        value = json.loads(text, parse_int=_json_int, parse_float=_json_float)
    except RecursionError:
        raise ValueError(f"lists nested deeper than {MAX_PIN_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{_shown(text)} is not a number or a JSON list ({exc.msg})"
                         ) from None
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(v)
        elif not isinstance(v, (bool, int, float)):
            raise ValueError(f"{_shown(json.dumps(v))} is not a number")
    return value


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > 20 or not -2**63 <= int(text) < 2**64:
        raise ValueError(f"integer {_shown(text)} is out of the int64/uint64 range")
    return int(text)


def _json_float(text: str) -> float:
    value = float(text)
    if not np.isfinite(value):
        raise ValueError(f"number {_shown(text)} is out of the float64 range")
    return value


def _array(value: Any) -> np.ndarray:
    try:
        arr = np.asarray(value)
    except (ValueError, OverflowError):
        raise ValueError("a list must be rectangular (every row of the same length)"
                         ) from None
    if arr.dtype.kind not in NUMERIC_KINDS:
        raise ValueError(f"the value must hold numbers, not {arr.dtype}")
    return arr


def npy_header_problem(f: Any, available: int) -> str | None:
    """What is wrong with the .npy header at the start of binary stream `f`, which holds
    `available` bytes, before numpy allocates the array it declares: a shape asking for
    more bytes than the stream holds, or more than the `max_constant_bytes` budget (the
    command's flag, else the default). None when nothing is (or when the stream is not an
    .npy file at all: numpy's own complaint names that)."""
    import numpy.lib.format as npy_format

    try:
        version = npy_format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = npy_format.read_array_header_1_0(f)
        elif version in ((2, 0), (3, 0)):
            shape, _, dtype = npy_format.read_array_header_2_0(f)
        else:
            return None
        header = f.tell()
    except (ValueError, EOFError, OSError, SyntaxError, TypeError):
        return None
    if dtype.hasobject:
        return None  # never loaded: numpy refuses pickles
    count = 1
    for d in shape:
        count *= int(d)
    need = count * dtype.itemsize
    declared = f"shape {list(shape)} of {dtype.name}"
    if need > available - header:
        return (f"its header declares {declared} ({format_bytes(need)}), but it holds "
                f"{format_bytes(max(available - header, 0))} of data")
    limit = int(given_budgets().max_constant_bytes)
    if need > limit:
        ctx = click.get_current_context(silent=True)
        flag = ctx is not None and any(p.name == "max_constant_bytes"
                                       for p in ctx.command.params)
        return (f"its header declares {declared} ({format_bytes(need)}), over the budget "
                f"of {format_bytes(limit)} for one array"
                f"{' (--max-constant-bytes)' if flag else ''}")
    return None


def _npy(path: str) -> np.ndarray:
    """The array of a .npy file (no pickles, numbers only)."""
    try:
        with open_regular(path, "the array file") as f:
            problem = npy_header_problem(f, os.fstat(f.fileno()).st_size)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except NotRegularFile as exc:
        raise ValueError(str(exc)) from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read it ({exc.strerror or exception_text(exc)})"
                         ) from None
    if problem:
        raise ValueError(f"{path}: {problem}")
    try:
        data = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read it ({exc.strerror or exception_text(exc)})"
                         ) from None
    except (ValueError, EOFError) as exc:
        raise ValueError(f"{path}: not a .npy array file ({_load_problem(exc)})") from None
    if not isinstance(data, np.ndarray):
        with contextlib.suppress(AttributeError):
            data.close()
        raise ValueError(f"{path}: not a .npy array file (an .npz archive? pin one array)")
    if data.dtype.kind not in NUMERIC_KINDS:
        raise ValueError(f"{path}: the array holds {data.dtype}, not numbers")
    return data


def _load_problem(exc: BaseException) -> str:
    """numpy's complaint about a file, in words (pickled data is never loaded)."""
    text = exception_text(exc)
    if "pickle" in text.lower():
        return "it holds pickled Python objects, which are never loaded"
    return text


def load_npz(path: str) -> dict[str, np.ndarray]:
    """Arrays of an .npz file by name: a zip of .npy arrays of numbers (bool, integers,
    floats); pickled objects are never loaded. A one-line CommandError otherwise."""
    import zipfile

    try:
        with open_regular(path, "the inputs file") as f:
            head = f.read(4)
    except FileNotFoundError:
        raise CommandError(f"{path}: no such file") from None
    except NotRegularFile as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"{path}: cannot read it ({exc.strerror or exception_text(exc)})"
                           ) from None
    if head[:2] != b"PK":
        raise CommandError(f"{path}: not an .npz archive (a zip of .npy arrays, as "
                           "numpy.savez writes)")
    arrays: dict[str, np.ndarray] = {}
    try:
        with zipfile.ZipFile(path) as zf:  # headers first: numpy allocates what they declare
            for info in zf.infolist():
                if not info.filename.endswith(".npy"):
                    continue
                with zf.open(info) as member:
                    problem = npy_header_problem(member, info.file_size)
                if problem:
                    raise CommandError(f"{path}: array {_shown(info.filename[:-4])}: "
                                       f"{problem}")
        with np.load(path, allow_pickle=False) as data:
            for key in data.files:
                try:
                    arr = data[key]
                except (ValueError, EOFError) as exc:
                    raise CommandError(f"{path}: array {_shown(key)} cannot be read "
                                       f"({_load_problem(exc)})") from None
                if not isinstance(arr, np.ndarray) or arr.dtype.kind not in NUMERIC_KINDS:
                    what = arr.dtype if isinstance(arr, np.ndarray) else "not a .npy array"
                    raise CommandError(f"{path}: entry {_shown(key)} holds {what}; inputs "
                                       "must be arrays of numbers (bool, integers, floats)")
                arrays[key] = arr
    except CommandError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError,
            NotImplementedError) as exc:
        raise CommandError(f"{path}: not a readable .npz archive ({_load_problem(exc)})"
                           ) from None
    return arrays


def check_tolerance(option: str, value: float) -> float:
    """--rtol / --atol: a finite number >= 0 (a one-line CommandError otherwise)."""
    if not (np.isfinite(value) and value >= 0):
        raise CommandError(f"{option} must be a finite number >= 0, got {value}")
    return value


def conversion_kwargs(dims: Sequence[str], shapes: Sequence[str], pins: Sequence[str],
                       signature: str | None, free_dims: Sequence[str] = ()
                       ) -> dict[str, Any]:
    """The keyword arguments of `converter.convert()` / `validate()` for the model options
    (--dim, --free-dim, --shape, --pin, --signature); a one-line CommandError for bad
    syntax or a dimension given two values."""
    try:
        named, axes = parse_dims(dims)
        explicit, _ = parse_dims(free_dims, named_only=True)
        for name, n in explicit.items():
            if named.get(name, n) != n:
                raise click.BadParameter(f"{name!r} is given twice ({named[name]} and {n})",
                                         param_hint="--dim/--free-dim")
            named[name] = n
        return {"free_dims": named or None, "input_dims": axes or None,
                "input_shapes": parse_shapes(shapes) or None,
                "pin_inputs": parse_pins(pins) or None, "signature": signature,
                "budgets": given_budgets()}
    except click.BadParameter as exc:
        raise CommandError(exc.format_message()) from None
