"""Reader for the webnn-graph format: `.webnn` text + `.weights` blob + `.manifest.json`
(see ../shared/docs/webnn-graph-format.md) -> an `MLGraph` built by a fresh MLGraphBuilder.

The text is tokenised and parsed by recursive descent following the grammar of the format
document; then every declaration is replayed through the builder, so the loaded graph is
validated exactly like one built in Python.

Leniency (as the reference parser): sections in any order, repeated or missing; `v 1` and
`v1`; outputs separated by `,` or `;`; a constant without annotation reads `@weights` under
its own name; several annotations, the last wins; versions 1 and 2; `dyn("name", max)`
input dimensions (replaced by `free_dims[name]` or the maximum); cast's `to=` as an alias of
`dataType=`; `roundingType=` as `outputShapeRounding=`; short dtype names (`f32`) for
`dataType`/`outputDataType` values; `y = x;` reads as `identity(x)`; graph outputs that
name an input or a constant are wrapped in `identity`; manifest keys are retried after
sanitising (`::` -> `__`, `.` -> `_`, unique match only); manifests whose offsets are
relative to the data area (smallest offset < 8) are accepted with a warning.

Strictness (clear `WebnnFormatError` naming the file and line instead of silent behaviour):
unknown characters, malformed numbers and strings, escapes other than `\\"` and `\\\\`,
positional literal arguments, unknown operators and options, `@bytes` values above 255 or of
the wrong length, `i4`/`u4` (not supported by this implementation), forward references,
duplicate names, manifest entries whose dtype/shape/length disagree with the declaration or
that reach outside the weights file, and any builder validation error (reported at the node).

Safety on hostile input: arrays nest at most `MAX_NESTING` deep (the parser is otherwise
iterative), number tokens are at most 400 characters, text files at most `MAX_TEXT_BYTES`,
every tensor byte length is checked against the spec maximum and, for `@weights`, against the
weights file before anything is read, and `@scalar` expansion is bounded by
`max_scalar_bytes` in total.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import math
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

import numpy as np

from converter.webnn import ML, MLContext, MLGraph, MLGraphBuilder, MLOperand
from converter.webnn.dtypes import MAX_DIMENSION, MAX_RANK, MAX_TENSOR_BYTE_LENGTH, cast_number

from .webnn_format import (
    LONG_DTYPES,
    MANIFEST_FORMAT,
    WEIGHTS_HEADER_BYTES,
    WEIGHTS_MAGIC,
    WEIGHTS_VERSION,
    op_signature,
)

MAX_NESTING = 32
MAX_NUMBER_CHARS = 400
MAX_TEXT_BYTES = 1 << 30
MAX_MANIFEST_BYTES = 256 << 20
DEFAULT_MAX_SCALAR_BYTES = 1 << 30
SUPPORTED_VERSIONS = (1, 2)
UNSUPPORTED_DTYPES = ("int4", "uint4")


class WebnnFormatError(ValueError):
    """A `.webnn`, `.weights` or manifest file is malformed or cannot be loaded.

    `path`, `line` and `column` locate the problem (line/column are None when they do not
    apply); str() reads `path:line:column: message`.
    """

    def __init__(self, message: str, path: str = "<string>", line: int | None = None,
                 column: int | None = None) -> None:
        where = path
        if line is not None:
            where += f":{line}"
            if column is not None:
                where += f":{column}"
        super().__init__(f"{where}: {message}")
        self.message = message
        self.path = path
        self.line = line
        self.column = column


class WeightsMismatch(ValueError):
    """A weights source has no tensor under a key, or one that disagrees with the constant's
    declaration; the loader reports it at the declaration (file and position)."""


class TensorSource(Protocol):
    """Weights other than a WGWT blob + manifest (e.g. a `.safetensors` archive)."""

    path: str
    names: tuple[Mapping[str, str], Mapping[str, str]] | None

    def get(self, key: str, data_type: str, shape: tuple[int, ...]) -> np.ndarray:
        """The tensor under `key` (declared `data_type`/`shape`); raises WeightsMismatch."""
        ...


# -- tokens ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Token:
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


class _Source:
    """The text and its line starts, for error positions."""

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self._newlines = [i for i, ch in enumerate(text) if ch == "\n"]

    def where(self, pos: int) -> tuple[int, int]:
        line = bisect.bisect_left(self._newlines, pos)
        start = self._newlines[line - 1] + 1 if line else 0
        return line + 1, pos - start + 1

    def error(self, message: str, pos: int) -> WebnnFormatError:
        line, col = self.where(pos)
        return WebnnFormatError(message, self.path, line, col)


def tokenize(src: _Source) -> list[Token]:
    """Split the text into tokens; whitespace and `#` comments are dropped."""
    text = src.text
    n = len(text)
    pos = 0
    out: list[Token] = []
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
            out.append(token)
        elif ch in _PUNCT:
            out.append(Token("PUNCT", ch, pos))
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
            out.append(Token("NUMBER", text[pos:end], pos))
            pos = end
        elif ch == "@":
            m = _AT.match(text, pos)
            if m is None or m.group()[1:] not in _ANNOTATIONS:
                bad = m.group() if m else "@"
                raise src.error(f"unknown annotation {bad!r} (expected @weights, @scalar, "
                                "@bytes or @quantized)", pos)
            out.append(Token("AT", m.group()[1:], pos))
            pos = m.end()
        else:
            m = _IDENT.match(text, pos)
            if m is None:
                raise src.error(f"unexpected character {ch!r}", pos)
            out.append(Token("IDENT", m.group(), pos))
            pos = m.end()
    out.append(Token("EOF", "", n))
    return out


def _string(src: _Source, start: int) -> tuple[Token, int]:
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


# -- syntax tree ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """An identifier used as a value (an operand name, or a bare word option value)."""

    name: str
    pos: int


@dataclass(frozen=True)
class Dim:
    size: int
    dyn_name: str | None = None


@dataclass(frozen=True)
class TypeSpec:
    data_type: str  # long name (float32, ...)
    dims: tuple[Dim, ...]


@dataclass(frozen=True)
class InputDecl:
    name: str
    type: TypeSpec
    pos: int


@dataclass(frozen=True)
class ConstDecl:
    """kind: "weights" (value = key), "scalar" (value = number) or "bytes" (value = tuple)."""

    name: str
    type: TypeSpec
    kind: str
    value: Any
    pos: int


@dataclass(frozen=True)
class Arg:
    name: str | None
    value: Any  # int | float | str | bool | None | list | Ref
    pos: int


@dataclass(frozen=True)
class NodeDecl:
    """`outputs = op(args)`; op None for the bare alias `y = x`."""

    outputs: tuple[str, ...]
    op: str | None
    args: tuple[Arg, ...]
    pos: int
    bracketed: bool


@dataclass(frozen=True)
class GraphText:
    """A parsed `.webnn` file."""

    name: str
    version: int
    quantized: bool
    inputs: tuple[InputDecl, ...]
    consts: tuple[ConstDecl, ...]
    nodes: tuple[NodeDecl, ...]
    outputs: tuple[tuple[str, int], ...]
    source: _Source

    def error(self, message: str, pos: int) -> WebnnFormatError:
        return self.source.error(message, pos)


class _Parser:
    def __init__(self, src: _Source) -> None:
        self.src = src
        self.tokens = tokenize(src)
        self.i = 0

    # token helpers
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def _describe(self, t: Token) -> str:
        if t.kind == "EOF":
            return "end of file"
        if t.kind == "STRING":
            return f"string {t.value[:30]!r}"
        if t.kind == "AT":
            return f"@{t.value}"
        return repr(t.value)

    def error(self, message: str, t: Token | None = None) -> WebnnFormatError:
        t = t or self.tok
        return self.src.error(f"{message}, found {self._describe(t)}", t.pos)

    def next(self) -> Token:
        t = self.tokens[self.i]
        if t.kind != "EOF":
            self.i += 1
        return t

    def is_punct(self, ch: str) -> bool:
        return self.tok.kind == "PUNCT" and self.tok.value == ch

    def expect_punct(self, ch: str) -> Token:
        if not self.is_punct(ch):
            raise self.error(f"expected {ch!r}")
        return self.next()

    def expect_ident(self, what: str = "an identifier") -> Token:
        if self.tok.kind != "IDENT":
            raise self.error(f"expected {what}")
        return self.next()

    def expect_keyword(self, word: str) -> Token:
        if self.tok.kind != "IDENT" or self.tok.value != word:
            raise self.error(f"expected {word!r}")
        return self.next()

    def expect_int(self, what: str) -> int:
        t = self.tok
        if t.kind != "NUMBER" or not t.value.isdigit():
            raise self.error(f"expected {what} (an unsigned integer)")
        self.next()
        return int(t.value)

    def expect_string(self, what: str) -> str:
        if self.tok.kind != "STRING":
            raise self.error(f"expected {what} (a string)")
        return self.next().value

    # grammar
    def parse(self) -> GraphText:
        self.expect_keyword("webnn_graph")
        name = self.expect_string("the graph name")
        version = self._version()
        quantized = False
        if self.tok.kind == "AT" and self.tok.value == "quantized":
            self.next()
            quantized = True
        self.expect_punct("{")
        inputs: list[InputDecl] = []
        consts: list[ConstDecl] = []
        nodes: list[NodeDecl] = []
        outputs: list[tuple[str, int]] = []
        while True:
            t = self.tok
            if self.is_punct("}"):
                self.next()
                break
            if t.kind != "IDENT" or t.value not in ("inputs", "consts", "nodes", "outputs"):
                raise self.error("expected a section (inputs, consts, nodes, outputs) or '}'")
            self.next()
            self.expect_punct("{")
            if t.value == "inputs":
                self._inputs(inputs)
            elif t.value == "consts":
                self._consts(consts)
            elif t.value == "nodes":
                self._nodes(nodes)
            else:
                self._outputs(outputs)
        if self.tok.kind != "EOF":
            raise self.error("expected the end of the file after the graph's closing '}'")
        return GraphText(name, version, quantized, tuple(inputs), tuple(consts), tuple(nodes),
                         tuple(outputs), self.src)

    def _version(self) -> int:
        t = self.tok
        if t.kind == "IDENT" and re.fullmatch(r"v[0-9]+", t.value):
            self.next()
            version = int(t.value[1:]) if len(t.value) < 12 else -1
        elif t.kind == "IDENT" and t.value == "v":
            self.next()
            version = self.expect_int("the format version")
        else:
            raise self.error("expected the format version ('v1' or 'v2')")
        if version not in SUPPORTED_VERSIONS:
            raise self.src.error(f"unsupported format version {t.value!r} (supported: v1, v2)",
                                 t.pos)
        return version

    def _type(self, allow_dyn: bool) -> TypeSpec:
        t = self.expect_ident("a data type")
        long = LONG_DTYPES.get(t.value)
        if long is None:
            raise self.src.error(f"unknown data type {t.value!r} (expected one of "
                                 f"{', '.join(LONG_DTYPES)})", t.pos)
        self.expect_punct("[")
        dims: list[Dim] = []
        if not self.is_punct("]"):
            while True:
                dims.append(self._dim(allow_dyn))
                if self.is_punct(","):
                    self.next()
                    continue
                break
        self.expect_punct("]")
        return TypeSpec(long, tuple(dims))

    def _dim(self, allow_dyn: bool) -> Dim:
        t = self.tok
        if t.kind == "IDENT" and t.value == "dyn":
            if not allow_dyn:
                raise self.src.error("dynamic dimensions (dyn) are only allowed in inputs",
                                     t.pos)
            self.next()
            self.expect_punct("(")
            name = self.expect_string("the dimension name")
            self.expect_punct(",")
            size = self.expect_int("the maximum size")
            self.expect_punct(")")
            return Dim(size, name)
        return Dim(self.expect_int("a dimension"))

    def _inputs(self, out: list[InputDecl]) -> None:
        while not self.is_punct("}"):
            t = self.expect_ident("an input name or '}'")
            self.expect_punct(":")
            ty = self._type(allow_dyn=True)
            self.expect_punct(";")
            out.append(InputDecl(t.value, ty, t.pos))
        self.next()

    def _consts(self, out: list[ConstDecl]) -> None:
        while not self.is_punct("}"):
            t = self.expect_ident("a constant name or '}'")
            self.expect_punct(":")
            ty = self._type(allow_dyn=False)
            kind, value = "weights", t.value
            while self.tok.kind == "AT":
                a = self.next()
                self.expect_punct("(")
                if a.value == "weights":
                    kind, value = "weights", self.expect_string("the weights key")
                elif a.value == "scalar":
                    kind, value = "scalar", self._number("the scalar value")
                elif a.value == "bytes":
                    kind, value = "bytes", self._byte_list()
                else:
                    raise self.src.error("@quantized belongs after the header version", a.pos)
                self.expect_punct(")")
            self.expect_punct(";")
            out.append(ConstDecl(t.value, ty, kind, value, t.pos))
        self.next()

    def _number(self, what: str) -> int | float:
        t = self.tok
        if t.kind != "NUMBER":
            raise self.error(f"expected {what} (a number)")
        self.next()
        return _number_value(t.value)

    def _byte_list(self) -> tuple[int, ...]:
        self.expect_punct("[")
        values: list[int] = []
        if not self.is_punct("]"):
            while True:
                t = self.tok
                v = self.expect_int("a byte value")
                if v > 255:
                    raise self.src.error(f"@bytes value {v} is not a byte (0-255)", t.pos)
                values.append(v)
                if self.is_punct(","):
                    self.next()
                    continue
                break
        self.expect_punct("]")
        return tuple(values)

    def _nodes(self, out: list[NodeDecl]) -> None:
        while not self.is_punct("}"):
            start = self.tok
            bracketed = self.is_punct("[")
            if bracketed:
                self.next()
                names = [self.expect_ident("an output name").value]
                while self.is_punct(","):
                    self.next()
                    names.append(self.expect_ident("an output name").value)
                self.expect_punct("]")
            else:
                names = [self.expect_ident("a node name or '}'").value]
            self.expect_punct("=")
            t = self.tok
            if t.kind == "IDENT" and t.value not in ("true", "false", "null"):
                self.next()
                if self.is_punct("("):
                    self.next()
                    args = self._args()
                    node = NodeDecl(tuple(names), t.value, tuple(args), start.pos, bracketed)
                else:
                    node = NodeDecl(tuple(names), None, (Arg(None, Ref(t.value, t.pos), t.pos),),
                                    start.pos, bracketed)
            else:
                raise self.src.error("a node must be an operator call or a name, not a literal "
                                     "(declare a constant instead)", t.pos)
            self.expect_punct(";")
            out.append(node)
        self.next()

    def _args(self) -> list[Arg]:
        args: list[Arg] = []
        if self.is_punct(")"):
            self.next()
            return args
        while True:
            t = self.tok
            nxt = self.tokens[self.i + 1] if t.kind != "EOF" else t
            if t.kind == "IDENT" and nxt.kind == "PUNCT" and nxt.value == "=":
                self.next()
                self.next()
                args.append(Arg(t.value, self._value(0), t.pos))
            else:
                args.append(Arg(None, self._value(0), t.pos))
            if self.is_punct(","):
                self.next()
                continue
            self.expect_punct(")")
            return args

    def _value(self, depth: int) -> Any:
        t = self.tok
        if t.kind == "NUMBER":
            self.next()
            return _number_value(t.value)
        if t.kind == "STRING":
            self.next()
            return t.value
        if t.kind == "IDENT":
            self.next()
            return {"true": True, "false": False, "null": None}.get(t.value, Ref(t.value, t.pos))
        if self.is_punct("["):
            if depth >= MAX_NESTING:
                raise self.error(f"arrays nested deeper than {MAX_NESTING} levels")
            self.next()
            items: list[Any] = []
            if not self.is_punct("]"):
                while True:
                    items.append(self._value(depth + 1))
                    if self.is_punct(","):
                        self.next()
                        continue
                    break
            self.expect_punct("]")
            return items
        raise self.error("expected a value (number, string, true, false, null, array or name)")

    def _outputs(self, out: list[tuple[str, int]]) -> None:
        while not self.is_punct("}"):
            t = self.expect_ident("an output name or '}'")
            out.append((t.value, t.pos))
            while self.is_punct(","):
                self.next()
                t = self.expect_ident("an output name")
                out.append((t.value, t.pos))
            if self.is_punct(";"):
                self.next()
        self.next()


def _number_value(text: str) -> int | float:
    if any(c in text for c in ".eE"):
        return float(text)
    return int(text)


def parse(text: str, path: str = "<string>") -> GraphText:
    """Parse `.webnn` text; raises WebnnFormatError with the file, line and column."""
    if not isinstance(text, str):
        raise TypeError("parse: text must be a str")
    if len(text) > MAX_TEXT_BYTES:
        raise WebnnFormatError(f"the text is larger than {MAX_TEXT_BYTES} characters", path)
    return _Parser(_Source(text, path)).parse()


# -- manifest and weights -------------------------------------------------------------------
@dataclass(frozen=True)
class TensorEntry:
    key: str
    data_type: str | None
    shape: tuple[int, ...] | None
    offset: int
    length: int


@dataclass(frozen=True)
class Manifest:
    """A validated manifest: tensor entries and the original input/output names."""

    tensors: Mapping[str, TensorEntry]
    input_names: Mapping[str, str]
    output_names: Mapping[str, str]
    path: str

    def find(self, key: str) -> TensorEntry | None:
        entry = self.tensors.get(key)
        if entry is not None:
            return entry
        wanted = _sanitize_key(key)
        matches = [e for k, e in self.tensors.items() if _sanitize_key(k) == wanted]
        return matches[0] if len(matches) == 1 else None


def _sanitize_key(key: str) -> str:
    return key.replace("::", "__").replace(".", "_")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_manifest(text: str | bytes, path: str = "<manifest>") -> Manifest:
    """Validate a manifest's structure (types, ranges); file bounds are checked on load."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise WebnnFormatError(f"invalid JSON: {e.msg}", path, e.lineno, e.colno) from None
    except (UnicodeDecodeError, RecursionError) as e:
        raise WebnnFormatError(f"invalid JSON: {e}", path) from None
    if not isinstance(data, dict):
        raise WebnnFormatError("the manifest must be a JSON object", path)
    if data.get("format", MANIFEST_FORMAT) != MANIFEST_FORMAT:
        raise WebnnFormatError(f"format is {data.get('format')!r}, expected "
                               f"{MANIFEST_FORMAT!r}", path)
    if data.get("version", 1) != 1 or isinstance(data.get("version"), bool):
        raise WebnnFormatError(f"unsupported manifest version {data.get('version')!r}", path)
    if data.get("endianness", "little") != "little":
        raise WebnnFormatError(f"unsupported endianness {data.get('endianness')!r}", path)
    tensors = data.get("tensors", {})
    if not isinstance(tensors, dict):
        raise WebnnFormatError("'tensors' must be an object", path)
    entries: dict[str, TensorEntry] = {}
    for key, e in tensors.items():
        if not isinstance(e, dict):
            raise WebnnFormatError(f"tensor {key!r}: entry must be an object", path)
        off, length = e.get("byteOffset"), e.get("byteLength")
        if not _is_int(off) or not _is_int(length) or off < 0 or length < 0:
            raise WebnnFormatError(f"tensor {key!r}: byteOffset and byteLength must be "
                                   f"non-negative integers, got {off!r}, {length!r}", path)
        dt = e.get("dataType")
        if dt is not None and not isinstance(dt, str):
            raise WebnnFormatError(f"tensor {key!r}: dataType must be a string", path)
        shape = e.get("shape")
        if shape is not None:
            if not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape):
                raise WebnnFormatError(f"tensor {key!r}: shape must be a list of non-negative "
                                       "integers", path)
            shape = tuple(shape)
        if e.get("layout", "row-major") != "row-major":
            raise WebnnFormatError(f"tensor {key!r}: unsupported layout {e.get('layout')!r}",
                                   path)
        entries[key] = TensorEntry(key, LONG_DTYPES.get(dt, dt) if dt else None, shape, off,
                                   length)
    if entries and min(e.offset for e in entries.values()) < WEIGHTS_HEADER_BYTES:
        warnings.warn(f"{path}: byte offsets look relative to the data area (smallest < "
                      f"{WEIGHTS_HEADER_BYTES}); reading them after the WGWT header",
                      stacklevel=2)
        entries = {k: TensorEntry(e.key, e.data_type, e.shape, e.offset + WEIGHTS_HEADER_BYTES,
                                  e.length) for k, e in entries.items()}
    names = data.get("names", {})
    if not isinstance(names, dict):
        raise WebnnFormatError("'names' must be an object", path)
    maps = []
    for section in ("inputs", "outputs"):
        m = names.get(section, {})
        if not isinstance(m, dict) or not all(isinstance(k, str) and isinstance(v, str) and v
                                              for k, v in m.items()):
            raise WebnnFormatError(f"names.{section} must map identifiers to non-empty "
                                   "strings", path)
        maps.append(dict(m))
    return Manifest(entries, maps[0], maps[1], path)


class _Weights:
    """Random access to a WGWT blob (a file or bytes) with bounds checks."""

    def __init__(self, data: bytes | None, file: IO[bytes] | None, size: int, path: str) -> None:
        self.data = data
        self.file = file
        self.size = size
        self.path = path
        header = data[:WEIGHTS_HEADER_BYTES] if data is not None else self._read_raw(
            0, min(size, WEIGHTS_HEADER_BYTES))
        if len(header) < WEIGHTS_HEADER_BYTES:
            raise WebnnFormatError(f"weights file is {size} bytes, shorter than its "
                                   f"{WEIGHTS_HEADER_BYTES}-byte header", path)
        if header[:4] != WEIGHTS_MAGIC:
            raise WebnnFormatError(f"not a WGWT weights file (magic {header[:4]!r})", path)
        version = int.from_bytes(header[4:8], "little")
        if version != WEIGHTS_VERSION:
            raise WebnnFormatError(f"unsupported weights version {version} (expected "
                                   f"{WEIGHTS_VERSION})", path)

    def _read_raw(self, offset: int, length: int) -> bytes:
        assert self.file is not None
        self.file.seek(offset)
        return self.file.read(length)

    def read(self, offset: int, length: int, what: str) -> bytes:
        if offset < WEIGHTS_HEADER_BYTES or offset + length > self.size:
            raise WebnnFormatError(f"{what}: bytes [{offset}, {offset + length}) are outside "
                                   f"the data area [{WEIGHTS_HEADER_BYTES}, {self.size}) of "
                                   "the weights file", self.path)
        if self.data is not None:
            return self.data[offset:offset + length]
        raw = self._read_raw(offset, length)
        if len(raw) != length:  # pragma: no cover - the file changed under us
            raise WebnnFormatError(f"{what}: short read", self.path)
        return raw


# -- building -------------------------------------------------------------------------------
_OPERAND_KEYS_ANY = frozenset({"scale", "bias", "c", "recurrentBias", "peepholeWeight",
                               "initialHiddenState", "initialCellState"})
_DTYPE_VALUE_KEYS = frozenset({"dataType", "outputDataType", "to"})
# Option names older producers write, mapped to the current spec names.
LEGACY_OPTIONS = {"roundingType": "outputShapeRounding"}


def _numel(doc: GraphText, ty: TypeSpec, pos: int, what: str) -> int:
    if len(ty.dims) > MAX_RANK:
        raise doc.error(f"{what}: rank {len(ty.dims)} exceeds {MAX_RANK}", pos)
    count = 1
    for d in ty.dims:
        if d.size > MAX_DIMENSION:
            raise doc.error(f"{what}: dimension {d.size} exceeds {MAX_DIMENSION}", pos)
        count *= d.size
    if count * np.dtype(ty.data_type).itemsize > MAX_TENSOR_BYTE_LENGTH:
        raise doc.error(f"{what}: {count} elements exceed the maximum tensor byte length", pos)
    return count


def _check_dtype(doc: GraphText, ty: TypeSpec, pos: int, what: str) -> None:
    if ty.data_type in UNSUPPORTED_DTYPES:
        raise doc.error(f"{what}: data type {ty.data_type} is not supported (widen 4-bit "
                        "tensors to int8/uint8)", pos)


class _Builder:
    def __init__(self, doc: GraphText, manifest: Manifest | None, weights: _Weights | None,
                 context: MLContext, free_dims: Mapping[str, int], max_scalar_bytes: int,
                 names: tuple[Mapping[str, str], Mapping[str, str]] | None = None,
                 tensors: TensorSource | None = None) -> None:
        self.doc = doc
        self.names = names
        self.tensors = tensors
        self.manifest = manifest
        self.weights = weights
        self.builder = MLGraphBuilder(context)
        self.free_dims = dict(free_dims)
        self.scalar_budget = max_scalar_bytes
        self.values: dict[str, MLOperand] = {}
        self.kinds: dict[str, str] = {}
        self._pos = 0

    def define(self, name: str, operand: MLOperand, kind: str, pos: int) -> None:
        if name in self.values:
            raise self.doc.error(f"{name!r} is already declared (as a {self.kinds[name]})", pos)
        self.values[name] = operand
        self.kinds[name] = kind

    def run(self) -> MLGraph:
        doc = self.doc
        if self.names is not None:
            in_names, out_names = self.names
        else:
            in_names = self.manifest.input_names if self.manifest else {}
            out_names = self.manifest.output_names if self.manifest else {}
        declared_inputs = {d.name for d in doc.inputs}
        for ident in in_names:
            if ident not in declared_inputs:
                raise WebnnFormatError(f"names.inputs refers to {ident!r}, which is not a "
                                       "declared input", self.manifest.path if self.manifest
                                       else doc.source.path)
        used_dyn: set[str] = set()
        seen_originals: set[str] = set()
        for d in doc.inputs:
            _check_dtype(doc, d.type, d.pos, f"input {d.name!r}")
            shape = []
            for dim in d.type.dims:
                size = dim.size
                if dim.dyn_name is not None:
                    used_dyn.add(dim.dyn_name)
                    if dim.dyn_name in self.free_dims:
                        size = self.free_dims[dim.dyn_name]
                        if not _is_int(size) or not 1 <= size <= dim.size:
                            raise doc.error(f"input {d.name!r}: dynamic dimension "
                                            f"{dim.dyn_name!r} = {size!r} must be an integer "
                                            f"in [1, {dim.size}]", d.pos)
                shape.append(size)
            original = in_names.get(d.name, d.name)
            if original in seen_originals:
                raise doc.error(f"input name {original!r} is used twice", d.pos)
            seen_originals.add(original)
            operand = self._call(d.pos, f"input {d.name!r}", self.builder.input, original,
                                 shape=shape, data_type=d.type.data_type)
            self.define(d.name, operand, "input", d.pos)
        unknown = set(self.free_dims) - used_dyn
        if unknown:
            raise WebnnFormatError(f"free_dims names unknown dynamic dimensions "
                                   f"{sorted(unknown)}", doc.source.path)
        for c in doc.consts:
            self.define(c.name, self._constant(c), "constant", c.pos)
        for node in doc.nodes:
            self._node(node)
        if not doc.outputs:
            raise WebnnFormatError("the graph has no outputs", doc.source.path)
        outputs: dict[str, MLOperand] = {}
        listed = set()
        for name, pos in doc.outputs:
            if name not in self.values:
                raise doc.error(f"output {name!r} is not declared", pos)
            if name in listed:
                raise doc.error(f"output {name!r} is listed twice", pos)
            listed.add(name)
            operand = self.values[name]
            if operand.kind != "output":
                operand = self._call(pos, f"output {name!r}", self.builder.identity, operand)
            original = out_names.get(name, name)
            if original in outputs:
                raise doc.error(f"output name {original!r} is used twice", pos)
            outputs[original] = operand
        for ident in out_names:
            if ident not in listed:
                raise WebnnFormatError(f"names.outputs refers to {ident!r}, which is not a "
                                       "graph output", self.manifest.path if self.manifest
                                       else doc.source.path)
        return self._call(doc.outputs[0][1], "build", self.builder.build, outputs)

    def _call(self, pos: int, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (TypeError, ValueError, OverflowError, IndexError, KeyError) as e:
            raise self.doc.error(f"{what}: {e}", pos) from e

    def _constant(self, c: ConstDecl) -> MLOperand:
        doc = self.doc
        what = f"constant {c.name!r}"
        _check_dtype(doc, c.type, c.pos, what)
        count = _numel(doc, c.type, c.pos, what)
        dtype = np.dtype(c.type.data_type)
        shape = tuple(d.size for d in c.type.dims)
        nbytes = count * dtype.itemsize
        if c.kind == "scalar":
            if nbytes > self.scalar_budget:
                raise doc.error(f"{what}: @scalar expands to {nbytes} bytes, more than the "
                                "remaining max_scalar_bytes budget", c.pos)
            self.scalar_budget -= nbytes
            # As the reference importer: through float32, then cast to the data type.
            try:
                f = float(c.value)
            except OverflowError:
                f = math.copysign(math.inf, c.value)
            with np.errstate(over="ignore"):
                f = float(np.float32(f))
            arr = np.full(shape, cast_number(f, c.type.data_type), dtype=dtype)
        elif c.kind == "bytes":
            if len(c.value) != nbytes:
                raise doc.error(f"{what}: @bytes has {len(c.value)} bytes, {c.type.data_type}"
                                f"{list(shape)} needs {nbytes}", c.pos)
            arr = np.frombuffer(bytes(c.value), dtype.newbyteorder("<")).astype(dtype)
            arr = arr.reshape(shape)
        else:
            arr = self._weights(c, what, dtype, shape, nbytes)
        return self._call(c.pos, what, self.builder.constant, arr)

    def _weights(self, c: ConstDecl, what: str, dtype: np.dtype, shape: tuple[int, ...],
                 nbytes: int) -> np.ndarray:
        doc = self.doc
        if self.tensors is not None:
            try:
                return self.tensors.get(c.value, c.type.data_type, shape)
            except WeightsMismatch as e:
                raise doc.error(f"{what}: {e}", c.pos) from None
        if self.manifest is None or self.weights is None:
            raise doc.error(f"{what}: @weights({c.value!r}) needs a weights file and a manifest",
                            c.pos)
        entry = self.manifest.find(c.value)
        if entry is None:
            raise doc.error(f"{what}: weights key {c.value!r} is not in the manifest "
                            f"{self.manifest.path}", c.pos)
        if entry.data_type is not None and entry.data_type != c.type.data_type:
            raise doc.error(f"{what}: the manifest says {entry.data_type}, the declaration "
                            f"{c.type.data_type}", c.pos)
        if entry.shape is not None and entry.shape != shape:
            raise doc.error(f"{what}: the manifest shape {list(entry.shape)} differs from the "
                            f"declared {list(shape)}", c.pos)
        if entry.length != nbytes:
            raise doc.error(f"{what}: the manifest byteLength {entry.length} differs from "
                            f"{nbytes} ({c.type.data_type}{list(shape)})", c.pos)
        raw = self.weights.read(entry.offset, entry.length, f"tensor {entry.key!r}")
        return np.frombuffer(raw, dtype.newbyteorder("<")).reshape(shape)

    def _node(self, node: NodeDecl) -> None:
        doc = self.doc
        self._pos = node.pos
        if node.op is None:
            ref = node.args[0].value
            operand = self._operand(ref.name, ref.pos, "identity")
            result: Any = self._call(node.pos, "identity", self.builder.identity, operand)
            op = "identity"
        else:
            op = node.op
            sig = op_signature(op)
            if sig is None:
                raise doc.error(f"unknown operator {op!r}", node.pos)
            positional: list[Arg] = []
            named: dict[str, Arg] = {}
            for arg in node.args:
                if arg.name is None:
                    if not isinstance(arg.value, (Ref, str)):
                        raise doc.error(f"{op}: positional argument {_show(arg.value)} is a "
                                        "literal; only operand names may be positional (write "
                                        "parameters as name=value)", arg.pos)
                    positional.append(arg)
                else:
                    if arg.name in named:
                        raise doc.error(f"{op}: argument {arg.name!r} is given twice", arg.pos)
                    named[arg.name] = arg
            if op == "cast" and "to" in named:
                if "dataType" in named:
                    raise doc.error("cast: both 'to' and 'dataType' given", named["to"].pos)
                named["dataType"] = named.pop("to")
            call_args: list[Any] = []
            for param in sig.positional:
                if param.spec_name == "inputs" and op == "concat":
                    call_args.append([self._operand_arg(op, a) for a in positional])
                    positional = []
                elif param.spec_name in named:
                    arg = named.pop(param.spec_name)
                    call_args.append(self._convert(op, param.spec_name, arg.value,
                                                   param.operand))
                elif param.operand and positional:
                    call_args.append(self._operand_arg(op, positional.pop(0)))
                else:
                    raise doc.error(f"{op}: missing argument {param.spec_name!r}", node.pos)
            if positional:
                raise doc.error(f"{op}: too many operand arguments", positional[0].pos)
            kwargs: dict[str, Any] = {}
            for key, arg in named.items():
                if key not in sig.options and key in LEGACY_OPTIONS:
                    if LEGACY_OPTIONS[key] in named:
                        raise doc.error(f"{op}: both {key!r} and {LEGACY_OPTIONS[key]!r} given",
                                        arg.pos)
                    key = LEGACY_OPTIONS[key]
                param = sig.options.get(key)
                if param is None:
                    raise doc.error(f"{op}: unknown option {key!r}", arg.pos)
                if arg.value is None:
                    continue
                kwargs[param.py_name] = self._convert(op, key, arg.value, param.operand)
            result = self._call(node.pos, op, getattr(self.builder, sig.method), *call_args,
                                **kwargs)
        results = result if isinstance(result, list) else [result]
        if len(results) != len(node.outputs):
            raise doc.error(f"{op} returns {len(results)} output(s), the statement names "
                            f"{len(node.outputs)}", node.pos)
        for name, operand in zip(node.outputs, results, strict=True):
            self.define(name, operand, "node output", node.pos)

    def _operand(self, name: str, pos: int, op: str) -> MLOperand:
        operand = self.values.get(name)
        if operand is None:
            raise self.doc.error(f"{op}: {name!r} is not declared before this use", pos)
        return operand

    def _operand_arg(self, op: str, arg: Arg) -> MLOperand:
        v = arg.value
        name = v.name if isinstance(v, Ref) else v
        return self._operand(name, arg.pos, op)

    def _convert(self, op: str, key: str, value: Any, operand: bool) -> Any:
        if operand or key in _OPERAND_KEYS_ANY:
            if isinstance(value, Ref):
                return self._operand(value.name, value.pos, op)
            if isinstance(value, str):
                if value not in self.values:
                    raise self.doc.error(f"{op}: option {key}: {value!r} is not declared before "
                                         "this use", self._pos)
                return self.values[value]
            return value
        return _plain(value, key in _DTYPE_VALUE_KEYS)


def _plain(value: Any, dtype_value: bool) -> Any:
    """Literal option value: Refs become strings, arrays lists; short dtype names long."""
    if isinstance(value, Ref):
        value = value.name
    if isinstance(value, list):
        return [_plain(v, dtype_value) for v in value]
    if dtype_value and isinstance(value, str):
        return LONG_DTYPES.get(value, value)
    return value


def _show(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, Ref) else value.name
    return text if len(text) <= 40 else text[:37] + "..."


# -- public entry points --------------------------------------------------------------------
def loads(text: str, weights: bytes | None = None, manifest: str | bytes | None = None, *,
          context: MLContext | None = None, free_dims: Mapping[str, int] | None = None,
          max_scalar_bytes: int = DEFAULT_MAX_SCALAR_BYTES, path: str = "<string>"
          ) -> MLGraph:
    """Build an MLGraph from in-memory `.webnn` text, weights bytes and manifest JSON."""
    doc = parse(text, path)
    man = parse_manifest(manifest, f"{path} (manifest)") if manifest is not None else None
    blob = (_Weights(bytes(weights), None, len(weights), f"{path} (weights)")
            if weights is not None else None)
    return _Builder(doc, man, blob, context or ML().create_context(), free_dims or {},
                    max_scalar_bytes).run()


def find_companions(path: Path) -> tuple[Path | None, Path | None]:
    """The weights blob and manifest next to a graph file (format doc section 5): the blob
    `<stem>.weights` or `model.weights`; the manifest named like the blob found
    (`model.manifest.json` for `model.weights`), else `<stem>.manifest.json`, else
    `manifest.json`."""
    stem = graph_stem(path)
    folder = path.parent
    weights = next((p for p in (folder / f"{stem}.weights", folder / "model.weights")
                    if p.is_file()), None)
    names = [f"{stem}.manifest.json", "manifest.json"]
    if weights is not None and weights.name == "model.weights":
        names.insert(0, "model.manifest.json")
    manifest = next((folder / n for n in names if (folder / n).is_file()), None)
    return weights, manifest


def graph_stem(path: Path) -> str:
    """`model` for `model.webnn` and `model.webnn.json` (else the name without its suffix)."""
    for suffix in (".webnn.json", ".webnn"):
        if path.name.endswith(suffix) and len(path.name) > len(suffix):
            return path.name[:-len(suffix)]
    return path.stem


@dataclass(frozen=True)
class WeightsFiles:
    """The weights of a graph file: a `.safetensors` archive, or a WGWT blob and its
    manifest (any may be None)."""

    safetensors: Path | None
    weights: Path | None
    manifest: Path | None


def find_weights(path: Path) -> WeightsFiles:
    """The weights next to graph file `path`, in the order of format doc section 5:
    `model.safetensors`, `<stem>.safetensors`, `<stem>.weights`, `model.weights`; a blob
    pairs with `<stem>.manifest.json` or `manifest.json`."""
    stem = graph_stem(path)
    folder = path.parent
    for candidate in (folder / "model.safetensors", folder / f"{stem}.safetensors"):
        if candidate.is_file():
            return WeightsFiles(candidate, None, None)
    return WeightsFiles(None, *find_companions(path))


def _is_wgwt(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == WEIGHTS_MAGIC
    except OSError as e:
        raise WebnnFormatError(f"cannot read: {e.strerror}", str(path)) from None


def build_graph(doc: GraphText, graph_path: Path, *, weights_path: str | Path | None = None,
                manifest_path: str | Path | None = None, context: MLContext | None = None,
                free_dims: Mapping[str, int] | None = None,
                max_scalar_bytes: int = DEFAULT_MAX_SCALAR_BYTES,
                names: tuple[Mapping[str, str], Mapping[str, str]] | None = None) -> MLGraph:
    """Replay parsed graph `doc` (from the text or the JSON form) through a fresh builder,
    reading `@weights` from `weights_path` (a WGWT blob with `manifest_path`, or a
    `.safetensors` archive: told apart by content) or, when not given, from the files
    `find_weights(graph_path)` finds. Weights are read tensor by tensor.

    Original input/output names come from `names` (the JSON form carries them), else from
    the safetensors metadata or the manifest.
    """
    found = find_weights(graph_path)
    if weights_path is not None:
        wpath = Path(weights_path)
        if _is_wgwt(wpath):
            found = WeightsFiles(None, wpath, find_companions(graph_path)[1])
        else:
            found = WeightsFiles(wpath, None, None)
    if manifest_path is not None:
        found = WeightsFiles(found.safetensors, found.weights, Path(manifest_path))
    ctx = context or ML().create_context()
    with contextlib.ExitStack() as stack:
        man = blob = tensors = None
        if found.safetensors is not None:
            from .safetensors_weights import SafetensorsWeights

            tensors = stack.enter_context(SafetensorsWeights(found.safetensors))
            if names is None:
                names = tensors.names
        else:
            if found.manifest is not None:
                man = parse_manifest(_read_file(found.manifest, MAX_MANIFEST_BYTES),
                                     str(found.manifest))
            if found.weights is not None:
                wpath = found.weights
                try:
                    f = stack.enter_context(open(wpath, "rb"))
                    size = os.fstat(f.fileno()).st_size
                except OSError as e:
                    raise WebnnFormatError(f"cannot read: {e.strerror}", str(wpath)) from None
                blob = _Weights(None, f, size, str(wpath))
        return _Builder(doc, man, blob, ctx, free_dims or {}, max_scalar_bytes, names,
                        tensors).run()


def load_webnn(path: str | Path, *, weights_path: str | Path | None = None,
               manifest_path: str | Path | None = None, context: MLContext | None = None,
               free_dims: Mapping[str, int] | None = None,
               max_scalar_bytes: int = DEFAULT_MAX_SCALAR_BYTES) -> MLGraph:
    """Load `<stem>.webnn` into an MLGraph, with its weights found next to it unless given
    (`find_weights`: `model.safetensors`, `<stem>.safetensors`, `<stem>.weights` +
    `<stem>.manifest.json`, `model.weights` + `manifest.json`); `weights_path` may name a
    blob or a `.safetensors` file.

    `free_dims` sets `dyn(...)` dimensions by name (default: their maximum). The weights file
    is read slice by slice (never wholly in memory).
    """
    path = Path(path)
    raw = _read_file(path, MAX_TEXT_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise WebnnFormatError(f"not UTF-8 text (byte {e.start})", str(path), line) from None
    doc = parse(text, str(path))
    return build_graph(doc, path, weights_path=weights_path, manifest_path=manifest_path,
                       context=context, free_dims=free_dims, max_scalar_bytes=max_scalar_bytes)


def _read_file(path: Path, limit: int) -> bytes:
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > limit:
                raise WebnnFormatError(f"the file is larger than {limit} bytes", str(path))
            return f.read()
    except OSError as e:
        raise WebnnFormatError(f"cannot read: {e.strerror}", str(path)) from None


__all__ = ["MAX_NESTING", "GraphText", "Manifest", "TensorSource", "WebnnFormatError",
           "WeightsFiles", "WeightsMismatch", "build_graph", "find_companions", "find_weights",
           "graph_stem", "load_webnn", "loads", "parse", "parse_manifest", "tokenize"]
