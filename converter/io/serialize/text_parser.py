"""Parser of the `.webnn` text (format doc section 1.2): tokens -> `GraphText`, the syntax tree
`converter.io.serialize.graph_builder` replays through the builder.

Lenient as the reference parser: sections in any order, repeated or missing; `v 1` and `v1`;
outputs separated by `,` or `;`; a constant without annotation reads `@weights` under its own
name; several annotations, the last wins; versions 1 and 2; `dyn("name", max)` dimensions
(inputs only); `y = x;` (a node that is a bare name) is kept for the builder to read as
`identity(x)`.

Strict elsewhere (a `WebnnFormatError` naming the file, line and column): unknown data types,
`@bytes` values above 255, literals where a node or a type belongs, arrays nested deeper than
`MAX_NESTING`, texts longer than `MAX_TEXT_BYTES`, anything after the closing `}`.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any

from converter.io.serialize.errors import WebnnFormatError
from converter.io.serialize.syntax import (
    Arg,
    ConstDecl,
    Dim,
    GraphText,
    InputDecl,
    NodeDecl,
    Ref,
    TypeSpec,
)
from converter.io.serialize.tables import (
    LONG_DTYPES,
    MAX_NESTING,
    MAX_TEXT_BYTES,
    SUPPORTED_VERSIONS,
)
from converter.io.serialize.tokenizer import Source, Token, iter_tokens


class _Parser:
    """Recursive descent over the tokens of one document (arrays nest at most
    `MAX_NESTING` deep; everything else is iterative)."""

    def __init__(self, src: Source) -> None:
        self.src = src
        self._stream = iter_tokens(src)  # read as parsing goes: an error stops it early
        self._ahead: deque[Token] = deque([next(self._stream)])

    # token helpers
    @property
    def tok(self) -> Token:
        return self._ahead[0]

    def peek(self) -> Token:
        """The token after the current one (EOF at the end)."""
        if len(self._ahead) < 2:
            if self._ahead[0].kind == "EOF":
                return self._ahead[0]
            self._ahead.append(next(self._stream))
        return self._ahead[1]

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
        t = self._ahead[0]
        if t.kind != "EOF":
            self._ahead.popleft()
            if not self._ahead:
                self._ahead.append(next(self._stream))
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
            kind = "weights"
            value: Any = t.value
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
            nxt = self.peek()
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
    return _Parser(Source(text, path)).parse()


__all__ = ["parse"]
