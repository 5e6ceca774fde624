"""The syntax tree of a webnn-graph document, built by the text parser and by the JSON
reader alike and replayed through the builder by `converter.io.serialize.graph_builder`.

Positions (`pos`) index the document's `Source`: a character offset for the text form, a JSON
location for the JSON form; `GraphText.error` turns one into a located `WebnnFormatError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from converter.io.serialize.errors import WebnnFormatError
from converter.io.serialize.tokenizer import Source


@dataclass(frozen=True)
class Ref:
    """An identifier used as a value (an operand name, or a bare word option value)."""

    name: str
    pos: int


@dataclass(frozen=True)
class Dim:
    """One dimension: its size, or for `dyn("name", max)` the name and the maximum."""

    size: int
    dyn_name: str | None = None


@dataclass(frozen=True)
class TypeSpec:
    """A declared type: data type (long name) and dimensions."""

    data_type: str  # long name (float32, ...)
    dims: tuple[Dim, ...]


@dataclass(frozen=True)
class InputDecl:
    """`name: type;` in the inputs section."""

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
    """One call argument: positional (`name` None) or `name=value`."""

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
    """A parsed graph document (`.webnn` text or `.webnn.json`)."""

    name: str
    version: int
    quantized: bool
    inputs: tuple[InputDecl, ...]
    consts: tuple[ConstDecl, ...]
    nodes: tuple[NodeDecl, ...]
    outputs: tuple[tuple[str, int], ...]
    source: Source

    def error(self, message: str, pos: int) -> WebnnFormatError:
        """A WebnnFormatError located at `pos` (to raise)."""
        return self.source.error(message, pos)


__all__ = ["Arg", "ConstDecl", "Dim", "GraphText", "InputDecl", "NodeDecl", "Ref", "TypeSpec"]
