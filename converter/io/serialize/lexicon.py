"""Identifiers and literals of the `.webnn` text, as the writers spell them.

Identifiers use the alphabet `[A-Za-z_/$][A-Za-z0-9_./]*`, are no keyword and do not start
with true/false/null (the reference parser tries literals first). Strings escape only `"` and
`\\`. Numbers: integers as digits, floats in shortest round-trip form, infinities as
`1e999` / `-1e999`; NaN is refused (`NotRepresentable`: the format's numbers have no
NaN; `has_nan` finds one before writing), booleans too (`WebnnExportError`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from converter.core.webnn import MLOperand
from converter.io.serialize.errors import NotRepresentable, WebnnExportError
from converter.io.serialize.tables import KEYWORDS

IDENT_RE = re.compile(r"[A-Za-z_/$][A-Za-z0-9_./]*\Z")
_BAD_IDENT_CHAR = re.compile(r"[^A-Za-z0-9_./]")


def is_identifier(name: str) -> bool:
    """True when `name` can be written as-is: identifier alphabet, not a keyword, not
    starting with true/false/null (the reference parser tries literals first)."""
    return (bool(IDENT_RE.match(name)) and name not in KEYWORDS
            and not name.startswith(("true", "false", "null")))


def sanitize_identifier(name: str) -> str:
    """Map `name` into the identifier alphabet (uniqueness is the caller's business)."""
    if is_identifier(name):
        return name
    ident = name[:1] if name[:1] == "$" else ""
    ident += _BAD_IDENT_CHAR.sub("_", name[len(ident):])
    if not ident or not re.match(r"[A-Za-z_/$]", ident[0]):
        ident = "_" + ident
    if not is_identifier(ident):
        ident = "_" + ident
    return ident


def format_string(text: str) -> str:
    """A string literal: only `"` and `\\` are escaped; everything else is literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def format_number(value: Any, what: str = "value") -> str:
    """Integers as digits, floats in shortest round-trip form; infinities as +-1e999."""
    if isinstance(value, (bool, np.bool_)):
        raise WebnnExportError(f"{what}: a boolean is not a number")
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    f = float(value)
    if math.isnan(f):
        raise NotRepresentable(f"{what}: NaN cannot be written in the .webnn text format")
    if math.isinf(f):
        return "1e999" if f > 0 else "-1e999"
    text = repr(f)
    if "." not in text and "e" not in text:  # pragma: no cover - repr always has one
        text += ".0"
    return text


def has_nan(value: Any) -> bool:
    """Whether an argument value (a number, or a list of them, nested) holds a NaN, which
    `format_number` refuses; operands, strings and booleans hold none."""
    if isinstance(value, (float, np.floating)):
        return math.isnan(value)
    if isinstance(value, (list, tuple, np.ndarray)):
        return any(has_nan(v) for v in value)
    return False


def format_value(value: Any, idents: Mapping[int, str], what: str) -> str:
    """An argument value: literal, array, or the identifier of an operand."""
    if isinstance(value, MLOperand):
        return idents[id(value)]
    if value is None:
        return "null"
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, str):
        return format_string(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return format_number(value, what)
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ", ".join(format_value(v, idents, what) for v in value) + "]"
    raise WebnnExportError(f"{what}: cannot write a value of type {type(value).__name__}")


class Namer:
    """Hands out unique identifiers."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def take(self, wanted: str) -> str:
        """`wanted` (sanitised), or with the first free `_<n>` suffix when already taken."""
        base = wanted if is_identifier(wanted) else sanitize_identifier(wanted)
        ident, n = base, 0
        while ident in self.used:
            n += 1
            ident = f"{base}_{n}"
        self.used.add(ident)
        return ident


__all__ = ["IDENT_RE", "Namer", "format_number", "format_string", "format_value",
           "is_identifier", "sanitize_identifier"]
