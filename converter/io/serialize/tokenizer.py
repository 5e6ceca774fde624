"""Tokenizer of the `.webnn` text (format doc section 1.1).

Tokens: identifiers (`[A-Za-z_/$][A-Za-z0-9_./]*`), numbers (`-?digits[.digits][e[+-]digits]`,
at most `MAX_NUMBER_CHARS` characters, not followed by an identifier character), strings (the
only escapes are `\\"` and `\\\\`; every other character, newlines too, is literal),
annotations (`@weights`, `@scalar`, `@bytes`, `@quantized`) and the punctuation `{}[](),;:=`.
Whitespace and `#` comments to the end of the line are dropped. Anything else is a
`WebnnFormatError` naming the file, line and column.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from converter.io.serialize.errors import WebnnFormatError
from converter.io.serialize.tables import MAX_NUMBER_CHARS


class Token(NamedTuple):
    """kind: IDENT, NUMBER, STRING, AT (annotation, value without '@'), PUNCT, EOF."""

    kind: str
    value: str
    pos: int


_IDENT = re.compile(r"[A-Za-z_/$][A-Za-z0-9_./]*")
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_SPACE = re.compile(r"[ \t\r\n]+")
_AT = re.compile(r"@[A-Za-z_]+")
_PUNCT = frozenset("{}[](),;:=")
_ANNOTATIONS = frozenset({"quantized", "weights", "scalar", "bytes"})


class Source:
    """The text and its line starts, for error positions."""

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path

    def where(self, pos: int) -> tuple[int, int]:
        """(line, column), both from 1, of character offset `pos` (counted when asked: only
        errors need it)."""
        pos = max(0, min(pos, len(self.text)))
        start = self.text.rfind("\n", 0, pos) + 1
        return self.text.count("\n", 0, pos) + 1, pos - start + 1

    def error(self, message: str, pos: int) -> WebnnFormatError:
        """A WebnnFormatError at offset `pos` (to raise)."""
        line, col = self.where(pos)
        return WebnnFormatError(message, self.path, line, col)


def tokenize(src: Source) -> list[Token]:
    """Split the text into tokens; whitespace and `#` comments are dropped."""
    return list(iter_tokens(src))


def iter_tokens(src: Source) -> Iterator[Token]:
    """The tokens of the text one by one, as `tokenize` lists them (the last is EOF), so
    that a parser reading them stops at the first error without tokenizing the rest."""
    text = src.text
    n = len(text)
    pos = 0
    while pos < n:
        ch = text[pos]
        if ch in " \t\r\n":
            m = _SPACE.match(text, pos)
            assert m is not None
            pos = m.end()
        elif ch == "#":
            end = text.find("\n", pos)
            pos = n if end < 0 else end
        elif ch == '"':
            token, pos = _string(src, pos)
            yield token
        elif ch in _PUNCT:
            yield Token("PUNCT", ch, pos)
            pos += 1
        elif ch == "-" or ch.isdigit() and ch.isascii():
            m = _NUMBER.match(text, pos)
            if m is None:
                raise src.error(f"malformed number starting with {text[pos:pos + 10]!r}", pos)
            end = m.end()
            if end < n and (text[end].isalnum() or text[end] in "._$/"):
                raise src.error(f"malformed number {text[pos:end + 1]!r} (numbers are "
                                "digits with an optional fraction and exponent)", pos)
            if end - pos > MAX_NUMBER_CHARS:
                raise src.error(f"number of {end - pos} characters is too long", pos)
            yield Token("NUMBER", text[pos:end], pos)
            pos = end
        elif ch == "@":
            m = _AT.match(text, pos)
            if m is None or m.group()[1:] not in _ANNOTATIONS:
                bad = m.group() if m else "@"
                raise src.error(f"unknown annotation {bad!r} (expected @weights, @scalar, "
                                "@bytes or @quantized)", pos)
            yield Token("AT", m.group()[1:], pos)
            pos = m.end()
        else:
            m = _IDENT.match(text, pos)
            if m is None:
                raise src.error(f"unexpected character {ch!r}", pos)
            yield Token("IDENT", m.group(), pos)
            pos = m.end()
    yield Token("EOF", "", n)


def _string(src: Source, start: int) -> tuple[Token, int]:
    """The string literal whose opening quote is at `start`, and the position after it.
    The only escapes are `\\"` and `\\\\`; every other character (newlines too) is literal."""
    text = src.text
    pos = start + 1
    parts: list[str] = []
    q = text.find('"', pos)
    while True:
        if q < 0:
            raise src.error("unterminated string", start)
        b = text.find("\\", pos, q)
        if b < 0:
            break
        parts.append(text[pos:b])
        nxt = text[b + 1:b + 2]
        if nxt not in ('"', "\\"):
            escape = "\\" + nxt
            raise src.error(f"invalid escape {escape!r} in a string (only \\\" and \\\\ "
                            "are allowed)", b)
        parts.append(nxt)
        pos = b + 2
        if pos > q:
            q = text.find('"', pos)
    parts.append(text[pos:q])
    return Token("STRING", "".join(parts), start), q + 1


__all__ = ["Source", "Token", "iter_tokens", "tokenize"]
