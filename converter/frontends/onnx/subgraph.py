"""Expanding ONNX function bodies and subgraphs into plain nodes (used by the importer).

- `function_body(node, local_functions, types)`: the `FunctionProto` that defines an op: a
  model-local function (`ModelProto.functions`) first, else the schema's function body
  (`onnx.defs`: `get_function_with_opset_version` or, for context-dependent functions,
  `get_context_dependent_function_with_opset_version`, which needs the input types).
- `expand_function(...)`: the body's nodes with every value renamed into a fresh scope,
  formal inputs/outputs bound to the caller's values and attribute references
  (`ref_attr_name`) resolved from the caller's attributes, the function's attribute defaults,
  or the schema's defaults.
- `expand_graph(...)`: a subgraph (If branch, Loop/Scan body) likewise: its inputs bound to
  given names, its initializers and node outputs renamed into a fresh scope, and names it
  does not define left alone (they refer to the enclosing scope). References to renamed
  names inside nested subgraphs are rewritten too.

Restrictions: attribute references inside subgraphs nested in a function body are not
resolved; function overloads (`FunctionProto.overload`) are not distinguished.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, cast

import numpy as np
import onnx
from onnx import AttributeProto

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.frontends.onnx.reader import make_node
from converter.frontends.onnx.tensors import onnx_elem_type, tensor_to_array


@dataclass(frozen=True)
class Expansion:
    """Nodes to visit in order, constants they need (renamed initializers), and the scoped
    names of the subgraph's outputs (in order)."""

    nodes: tuple[Node, ...]
    constants: Mapping[str, np.ndarray]
    outputs: tuple[str, ...]


class SchemaFunctions(Protocol):
    """The function-body API of `onnx.defs.OpSchema`, which onnx's type stubs omit."""

    @property
    def has_function(self) -> bool: ...

    @property
    def function_opset_versions(self) -> list[int]: ...

    def get_function_with_opset_version(self, version: int, /) -> bytes: ...

    @property
    def has_context_dependent_function(self) -> bool: ...

    @property
    def context_dependent_function_opset_versions(self) -> list[int]: ...

    def get_context_dependent_function_with_opset_version(
            self, version: int, node: bytes, input_types: Sequence[bytes], /) -> bytes: ...


def schema_functions(op_type: str, version: int, domain: str) -> SchemaFunctions:
    """`onnx.defs.get_schema(op_type, version, domain)` seen through its function-body API
    (`onnx.defs.SchemaError` when there is no such schema)."""
    return cast(SchemaFunctions, onnx.defs.get_schema(op_type, version, domain))


def _norm(domain: str) -> str:
    return "" if domain in ("", "ai.onnx") else domain


def function_body(node: Node, local_functions: Mapping[tuple[str, str], onnx.FunctionProto],
                  input_types: Sequence[tuple[str, tuple[int, ...]] | None]
                  ) -> onnx.FunctionProto | None:
    """The FunctionProto defining `node`'s op, or None. `input_types` gives (ONNX dtype name,
    shape) per node input (None for omitted inputs); context-dependent schema functions are
    specialised on them."""
    local = local_functions.get((node.domain, node.op_type))
    if local is not None:
        return local
    try:
        schema = schema_functions(node.op_type, node.version, node.domain)
    except onnx.defs.SchemaError:
        return None
    if schema.has_function:
        # onnx returns b"" (not None) when no body is defined up to the node's opset
        body = schema.get_function_with_opset_version(node.version)
        if not body and schema.function_opset_versions:
            body = schema.get_function_with_opset_version(min(schema.function_opset_versions))
        if body:
            return body if isinstance(body, onnx.FunctionProto) else _parse_function(body)
    if schema.has_context_dependent_function and node.proto is not None:
        types = []
        for entry in input_types:
            tp = onnx.TypeProto()
            if entry is not None:
                dtype, shape = entry
                tp.tensor_type.elem_type = onnx_elem_type(dtype) if dtype != "string" else \
                    onnx.TensorProto.STRING
                for d in shape:
                    tp.tensor_type.shape.dim.add().dim_value = int(d)
            types.append(tp.SerializeToString())
        proto = _with_defaults(node)
        versions = [v for v in schema.context_dependent_function_opset_versions
                    if v <= node.version] or list(schema.context_dependent_function_opset_versions)
        try:
            raw = schema.get_context_dependent_function_with_opset_version(
                max(versions), proto.SerializeToString(), types)
        except Exception:  # noqa: BLE001 - onnx raises assorted errors for bad contexts
            return None
        if raw:
            return raw if isinstance(raw, onnx.FunctionProto) else _parse_function(raw)
    return None


def _parse_function(data: bytes) -> onnx.FunctionProto:
    fn = onnx.FunctionProto()
    fn.ParseFromString(data)
    return fn


def _with_defaults(node: Node) -> onnx.NodeProto:
    """The node's proto (context-dependent function builders read attributes from it)."""
    proto = onnx.NodeProto()
    proto.CopyFrom(node.proto)
    return proto


class Scope:
    """Fresh names for one expansion: `prefix + name`."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.mapping: dict[str, str] = {}
        self.fixed: dict[str, str] = {}

    def bind(self, formal: str, actual: str) -> None:
        self.mapping[formal] = actual

    def define(self, name: str) -> str:
        if not name:
            return ""
        new = self.fixed.get(name) or self.prefix + name
        self.mapping[name] = new
        return new

    def ref(self, name: str) -> str:
        return self.mapping.get(name, name) if name else ""


def rename_refs(graph: onnx.GraphProto, mapping: Mapping[str, str]) -> None:
    """Rewrite (in place) the references of `graph`'s nodes, and of graphs nested in them, to
    names in `mapping` that the graph does not itself define (shadowing respected)."""
    local = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    local |= {o for n in graph.node for o in n.output}
    visible = {k: v for k, v in mapping.items() if k not in local}
    if not visible:
        return
    for n in graph.node:
        for i, name in enumerate(n.input):
            if name in visible:
                n.input[i] = visible[name]
        for a in n.attribute:
            if a.type == AttributeProto.GRAPH:
                rename_refs(a.g, visible)
            elif a.type == AttributeProto.GRAPHS:
                for g in a.graphs:
                    rename_refs(g, visible)
    for o in graph.output:
        if o.name in visible and o.name not in local:
            o.name = visible[o.name]


def _copy_node(proto: onnx.NodeProto, scope: Scope) -> onnx.NodeProto:
    new = onnx.NodeProto()
    new.CopyFrom(proto)
    for i, name in enumerate(new.input):
        new.input[i] = scope.ref(name)
    for a in new.attribute:
        if a.type == AttributeProto.GRAPH:
            rename_refs(a.g, scope.mapping)
        elif a.type == AttributeProto.GRAPHS:
            for g in a.graphs:
                rename_refs(g, scope.mapping)
    for i, name in enumerate(new.output):
        new.output[i] = scope.define(name)
    return new


def expand_function(node: Node, fn: onnx.FunctionProto, prefix: str,
                    opsets: Mapping[str, int]) -> Expansion:
    """The nodes of `fn` specialised for the call `node` (see the module docstring). Outputs
    of the call are the node's own output names; unused formal outputs get scoped names."""
    scope = Scope(prefix)
    for i, formal in enumerate(fn.input):
        scope.bind(formal, node.input(i))
    for i, formal in enumerate(fn.output):
        if i < len(node.outputs) and node.outputs[i]:
            scope.fixed[formal] = node.outputs[i]
    fn_opsets = dict(opsets)
    for entry in fn.opset_import:
        fn_opsets[_norm(entry.domain)] = int(entry.version)
    defaults: dict[str, AttributeProto] = {a.name: a for a in fn.attribute_proto}
    try:
        schema_attrs = onnx.defs.get_schema(node.op_type, node.version,
                                            node.domain).attributes
    except onnx.defs.SchemaError:
        schema_attrs = {}
    given: dict[str, AttributeProto] = ({a.name: a for a in node.proto.attribute}
                                        if node.proto is not None else {})

    def resolve(ref: str) -> AttributeProto | None:
        if ref in given:
            return given[ref]
        if ref in defaults:
            return defaults[ref]
        spec = schema_attrs.get(ref)
        if spec is not None and spec.default_value.type != AttributeProto.UNDEFINED:
            return spec.default_value
        return None

    for proto in fn.node:  # first: a node may read a value a later-listed node writes
        for name in proto.output:
            scope.define(name)
    nodes: list[Node] = []
    for index, proto in enumerate(fn.node):
        new = _copy_node(proto, scope)
        kept = []
        for a in new.attribute:
            if a.ref_attr_name:
                value = resolve(a.ref_attr_name)
                if value is None:
                    continue
                resolved = AttributeProto()
                resolved.CopyFrom(value)
                resolved.name = a.name
                kept.append(resolved)
            else:
                kept.append(a)
        del new.attribute[:]
        new.attribute.extend(kept)
        name = f"{prefix}{proto.name or f'{proto.op_type}_{index}'}"
        nodes.append(make_node(new, fn_opsets, index, name=name))
    outputs = tuple(scope.ref(formal) for formal in fn.output)
    return Expansion(tuple(nodes), {}, outputs)


def expand_graph(graph: onnx.GraphProto, bindings: Sequence[str], prefix: str,
                 opsets: Mapping[str, int], base_dir: Path | None = None) -> Expansion:
    """The nodes of subgraph `graph` with its i-th input bound to value name `bindings[i]`
    ("" leaves it unbound), its initializers and node outputs renamed with `prefix`."""
    if len(bindings) > len(graph.input):
        raise InvalidModel(f"subgraph {graph.name!r} takes {len(graph.input)} inputs, "
                           f"{len(bindings)} given")
    scope = Scope(prefix)
    for formal, actual in zip(graph.input, bindings, strict=False):
        if actual:
            scope.bind(formal.name, actual)
    constants: dict[str, np.ndarray] = {}
    for tensor in graph.initializer:
        arr = tensor_to_array(tensor, base_dir, f"subgraph {graph.name!r}")
        if arr.flags.writeable:
            arr.setflags(write=False)
        constants[scope.define(tensor.name)] = arr
    for proto in graph.node:  # first: a node may read a value a later-listed node writes
        for name in proto.output:
            scope.define(name)
    nodes = []
    for index, proto in enumerate(graph.node):
        new = _copy_node(proto, scope)
        name = f"{prefix}{proto.name or f'{proto.op_type}_{index}'}"
        nodes.append(make_node(new, opsets, index, base_dir, name=name))
    outputs = tuple(scope.ref(o.name) for o in graph.output)
    return Expansion(tuple(nodes), constants, outputs)
