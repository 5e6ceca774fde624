"""Literals that are safe to place in generated JavaScript and HTML: model names come from
strangers, so nothing here can end a string, close a `<script>` element or add markup."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

__all__ = ["html_literal", "js_number", "js_string"]

MAX_SAFE_INTEGER = 2**53 - 1


def js_string(text: str) -> str:
    """A JavaScript string literal that is also inert inside HTML `<script>` elements."""
    out = json.dumps(text, ensure_ascii=True)
    return (out.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


_HTML_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                        " _-.,:;/()[]{}+=*!?@#%^|~")


def html_literal(text: str) -> str:
    """`text` as HTML character data or a quoted attribute value: every character outside
    letters, digits and a few inert punctuation marks becomes a numeric character
    reference (`<` -> `&#60;`, `\\n` -> `&#10;`, `名` -> `&#21517;`), so the result is ASCII,
    holds no markup, quote, backslash, line break or U+2028/U+2029, and shows `text`
    unchanged. Lone surrogates become U+FFFD."""
    out = []
    for ch in text:
        if ch in _HTML_PLAIN:
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"&#{0xFFFD if 0xD800 <= code <= 0xDFFF or code == 0 else code};")
    return "".join(out)


def js_number(value: Any) -> str:
    """A JavaScript number literal: an integer beyond 2**53 - 1 as a BigInt (`...n`), NaN and
    the infinities by name, a float by its shortest round-tripping repr."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        v = int(value)
        return f"{v}n" if abs(v) > MAX_SAFE_INTEGER else str(v)
    f = float(value)
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    return repr(f)
