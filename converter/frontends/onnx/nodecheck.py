"""A node's structure against its ONNX schema, checked before its handler runs.

`check_node(node)` compares what a node declares with the op's schema
(`onnx.defs.get_schema(op_type, opset, domain)`), as onnxruntime does when it loads a model:

- the number of inputs and outputs within the schema's [min, max] (trailing omitted ones,
  named "", are not counted against the maximum);
- every single (non-optional, non-variadic) input named (not omitted with "");
- every required attribute present, and every attribute the schema knows of its type.

A node that breaks one of these is an `InvalidModel` error whose one-line message says what
is wrong (the importer adds the node's op type, name and opset), so handlers may trust the
counts, the required inputs and the attribute types. Ops without an onnx schema (model-local
functions, contrib domains such as com.microsoft) are not checked here; their handlers check
what they read (`op_mappings/_common/checks.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import onnx
from onnx import AttributeProto

from converter.core.errors import InvalidModel
from converter.core.ir import Node

_SINGLE = onnx.defs.OpSchema.FormalParameterOption.Single
_UNBOUNDED = 2**31 - 1
"""onnx's "no maximum" for input/output counts."""


@lru_cache(maxsize=4096)
def schema_of(op_type: str, version: int, domain: str) -> Any:
    """The onnx `OpSchema` of the op at that opset, or None when onnx has none."""
    try:
        return onnx.defs.get_schema(op_type, version, domain)
    except onnx.defs.SchemaError:
        return None


def _count_text(lo: int, hi: int) -> str:
    if lo == hi:
        return str(lo)
    if hi >= _UNBOUNDED:
        return f"at least {lo}"
    return f"{lo} to {hi}"


def _trimmed(names: tuple[str, ...]) -> int:
    """The number of names up to the last one that is not omitted ("")."""
    n = len(names)
    while n and not names[n - 1]:
        n -= 1
    return n


def _type_name(kind: int) -> str:
    try:
        name: str = AttributeProto.AttributeType.Name(kind)
    except ValueError:
        return f"type {kind}"
    return name


@dataclass(frozen=True)
class _Rules:
    """What `check_node` reads of a schema, read once per (op, opset, domain): onnx builds
    new Python objects for `schema.inputs` and `schema.attributes` on every access."""

    min_input: int
    max_input: int
    min_output: int
    max_output: int
    single_inputs: tuple[tuple[int, str], ...]
    """(position, formal name) of every single (required, non-variadic) input."""
    attributes: tuple[tuple[str, bool, int], ...]
    """(name, required, type) of every attribute, in the schema's order."""


@lru_cache(maxsize=4096)
def _rules(op_type: str, version: int, domain: str) -> _Rules | None:
    schema = schema_of(op_type, version, domain)
    if schema is None:
        return None
    return _Rules(schema.min_input, schema.max_input, schema.min_output, schema.max_output,
                  tuple((i, formal.name) for i, formal in enumerate(schema.inputs)
                        if formal.option == _SINGLE),
                  tuple((name, bool(spec.required), int(spec.type))
                        for name, spec in schema.attributes.items()))


def check_node(node: Node) -> None:
    """Raise `InvalidModel` when `node` does not fit its op's schema (see the module
    docstring); nothing when it fits or the op has no schema."""
    schema = _rules(node.op_type, node.version, node.domain)
    if schema is None:
        return
    op = node.op_type
    n_in, n_out = len(node.inputs), len(node.outputs)
    if n_in < schema.min_input or _trimmed(node.inputs) > schema.max_input:
        raise InvalidModel(f"the node has {n_in} input(s), {op} takes "
                           f"{_count_text(schema.min_input, schema.max_input)}")
    if n_out < schema.min_output or _trimmed(node.outputs) > schema.max_output:
        raise InvalidModel(f"the node has {n_out} output(s), {op} has "
                           f"{_count_text(schema.min_output, schema.max_output)}")
    for i, formal_name in schema.single_inputs:
        if not node.input(i):
            raise InvalidModel(f"required input {i} ({formal_name}) of {op} is missing")
    if not schema.attributes:
        return
    given = ({a.name: a for a in node.proto.attribute} if node.proto is not None else {})
    for name, required, want in schema.attributes:
        attr = given.get(name)
        if attr is None:
            if required and name not in node.attrs:
                raise InvalidModel(f"required attribute {name!r} of {op} is missing")
            continue
        if want != AttributeProto.UNDEFINED and attr.type != want:
            raise InvalidModel(f"attribute {name!r} is {_type_name(attr.type)}, {op} expects "
                               f"{_type_name(want)}")
