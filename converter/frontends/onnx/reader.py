"""ONNX reader: a model file (or ModelProto) -> `SourceGraph`, a format-neutral view.

What it does:
- loads the protobuf (a truncated or corrupt file, or one whose names are not UTF-8, raises
  `InvalidModel` naming the file) without copying the weights: the raw_data of large numeric
  initializers stays where it is (read-only views of the file's memory map, or of the bytes
  given; `rawdata`), only the rest is parsed,
  runs `onnx.checker` lightly, on the model without those weights (its complaints become
  warnings: onnxruntime accepts many models the checker rejects) and checks the structure
  the importer relies on itself (known opset domains, every node input defined by an input,
  an initializer or a node);
- resolves external data ONLY inside the model's folder: absolute locations, `..` components
  and symlinks leaving the folder are rejected with `InvalidModel`; numeric tensors are
  memory-mapped, not read;
- lists nodes in graph order with `version` = the opset of the node's domain and attributes
  with the schema defaults (`onnx.defs.get_schema(op_type, version, domain)`) filled in; a
  graph whose nodes are not in topological order (onnxruntime runs them; its float16 tool
  writes them) is sorted, stably (`node_order.topological_order`);
- lists graph inputs (initializers are not inputs) with static shapes after applying
  `input_shapes` (whole shapes by input name), `input_dims` (single axes by input name and
  axis) and `free_dims` (by `dim_param` name), most specific first; a dimension with neither
  `dim_value` nor `dim_param`, or with a negative `dim_value` (paddle2onnx writes -1), is an
  unnamed free dimension (`dim_value: 0` is a real, empty dimension); a batch nobody set is
  converted at 1 with a warning naming the setting (`converter.frontends.free_dims`); every
  dimension still unknown is listed in one `UnresolvedDimensions` error whose `fixes` name
  what to set, with the sizes the model implies (`inputs.implied_sizes`: metadata,
  value_info) or placeholders;
- `pin_inputs` turns graph inputs into constants (inputs, dimensions and pins: `inputs`);
- constants: initializers and the outputs of `Constant` nodes, as numpy arrays in their ONNX
  dtype (bool stays bool, float64 stays float64: the importer decides what to do with them).

Restrictions: subgraph attributes (If/Loop/Scan bodies) are kept as raw `GraphProto`s (the
importer expands them); model-local functions (`ModelProto.functions`) are kept as raw
`FunctionProto`s in `SourceGraph.functions` (the importer inlines them); each `Node` keeps its
`NodeProto` (`proto`) so attribute references of function bodies can be resolved; sparse
initializers are densified; string tensors are numpy object arrays.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import onnx
from google.protobuf.message import DecodeError

from converter.core.errors import InvalidModel, UnresolvedDimensions, exception_text, quoted
from converter.core.ir import Node, SourceGraph
from converter.frontends.base import read_model_file
from converter.frontends.free_dims import InputDims
from converter.frontends.onnx.inputs import (
    implied_sizes,
    pin_values,
    resolve_inputs,
    value_info,
)
from converter.frontends.onnx.node_order import topological_order
from converter.frontends.onnx.rawdata import split_raw_data, tensor_view
from converter.frontends.onnx.sizing import size_model
from converter.frontends.onnx.tensors import (
    _sparse_to_array,
    node_attributes,
    tensor_to_array,
)
from op_mappings.onnx.constant import constant_node_value

# -- loading -----------------------------------------------------------------------------

MAX_OPSET = 2**31 - 1
"""Opset versions above this (onnx's schema lookup takes a C int) are an invalid model."""


def load_proto(model: str | os.PathLike[str] | bytes | onnx.ModelProto
               ) -> tuple[onnx.ModelProto, Path | None, str]:
    """The ModelProto (external data NOT loaded), the folder external data lives in (None for
    in-memory models) and a display name for messages."""
    if isinstance(model, onnx.ModelProto):
        _check_text(model, "<ModelProto>")
        return model, None, "<ModelProto>"
    if isinstance(model, (bytes, bytearray)):
        return _parse(bytes(model), "<bytes>"), None, "<bytes>"
    path = Path(model)
    return _parse(read_model_file(path), str(path)), path.resolve().parent, str(path)


def _load_split(model: str | os.PathLike[str] | bytes | onnx.ModelProto
                ) -> tuple[onnx.ModelProto, Path | None, str, dict[int, memoryview]]:
    """`load_proto`, with the raw_data of the graph's large numeric initializers left out of
    the parsed proto and given as read-only views instead (position among the initializers
    -> bytes; `rawdata.split_raw_data`): into a read-only memory map of the file, or into
    the bytes given. A ModelProto, an empty file, or bytes the split does not expect are
    loaded as `load_proto` does (no views)."""
    if isinstance(model, onnx.ModelProto):
        return (*load_proto(model), {})
    if isinstance(model, (bytes, bytearray)):
        data: bytes | memoryview = bytes(model)
        label, base_dir = "<bytes>", None
    else:
        path = Path(model)
        data = read_model_file(path)
        label, base_dir = str(path), path.resolve().parent
    split = split_raw_data(data)
    if split is None:
        return _parse(bytes(data), label), base_dir, label, {}
    return _parse(split.skeleton, label), base_dir, label, split.views


def _checkable(proto: onnx.ModelProto, views: Mapping[int, memoryview]) -> onnx.ModelProto:
    """What onnx.checker checks for `proto` read without the raw_data of the initializers
    at `views`' positions: a copy of the skeleton (small) in which each of those tensors is
    an empty one (dims [0], empty raw_data) of its name and type, so that the checker sees
    every node, value and initializer but serializes no weights. (The one check it loses,
    raw_data's size against dims and type, `rawdata.tensor_view` makes.)"""
    if not views:
        return proto
    copy = onnx.ModelProto()
    copy.CopyFrom(proto)
    for index in views:
        tensor = copy.graph.initializer[index]
        del tensor.dims[:]
        tensor.dims.append(0)
        tensor.raw_data = b""
    return copy


def _parse(data: bytes, label: str) -> onnx.ModelProto:
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise InvalidModel(f"{label} is not a valid ONNX model (truncated or corrupt "
                           f"protobuf: {exception_text(exc)})") from exc
    if not proto.HasField("graph") or proto.ir_version == 0:
        raise InvalidModel(f"{label} is not a valid ONNX model (no graph or no ir_version)")
    _check_text(proto, label)
    for owner, entries in [("the model", proto.opset_import)] + [
            (f"function {quoted(fn.name)}", fn.opset_import) for fn in proto.functions]:
        for entry in entries:
            if not 0 <= entry.version <= MAX_OPSET:
                raise InvalidModel(f"{label}: {owner} imports opset {entry.version} of domain "
                                   f"{quoted(entry.domain)}, outside 0..{MAX_OPSET}")
    return proto


def _check_text(proto: onnx.ModelProto, label: str) -> None:
    """InvalidModel when a name the converter reads (of a graph, value, initializer, node,
    op type, domain, attribute, attribute reference or external-data entry, in every graph,
    subgraph and function) is not UTF-8: protobuf then gives bytes, which no name lookup
    matches and which cannot be written back into a renamed copy (a subgraph's nodes)."""
    names: list[str | bytes] = [o.domain for o in proto.opset_import]
    add = names.extend

    # (empty repeated fields are tested with len() first: iterating one costs protobuf
    # much more than asking its length)
    def tensors(items: Any) -> None:
        for t in items:
            names.append(t.name)
            if len(t.external_data):
                for e in t.external_data:
                    names.extend((e.key, e.value))

    def nodes(items: Any) -> None:
        for n in items:
            add((n.name, n.op_type, n.domain))
            add(n.input)
            add(n.output)
            for a in n.attribute:
                add((a.name, a.ref_attr_name))
                if a.HasField("t"):
                    tensors((a.t,))
                if len(a.tensors):
                    tensors(a.tensors)
                if a.HasField("g"):
                    graph(a.g)
                if len(a.graphs):
                    for g in a.graphs:
                        graph(g)

    def graph(g: onnx.GraphProto) -> None:
        names.append(g.name)
        for infos in (g.input, g.output, g.value_info):
            add([vi.name for vi in infos])
        tensors(g.initializer)
        if len(g.sparse_initializer):
            tensors([s.values for s in g.sparse_initializer])
            tensors([s.indices for s in g.sparse_initializer])
        nodes(g.node)

    graph(proto.graph)
    for f in proto.functions:
        add((f.name, f.domain))
        add(f.input)
        add(f.output)
        add(f.attribute)
        nodes(f.node)
    if bytes in set(map(type, names)):
        bad = next(v for v in names if isinstance(v, bytes))
        raise InvalidModel(f"{label} is not a valid ONNX model: the name {bad!r} is not "
                           "UTF-8 text")


def read_onnx(model: str | os.PathLike[str] | bytes | onnx.ModelProto, *,
              free_dims: Mapping[str, int] | None = None,
              input_shapes: Mapping[str, Sequence[int]] | None = None,
              pin_inputs: Mapping[str, Any] | None = None,
              input_dims: InputDims | None = None) -> SourceGraph:
    """Read an ONNX model into a `SourceGraph` (see the module docstring)."""
    proto, base_dir, label, views = _load_split(model)
    size_model(proto, label)  # node counts, nesting, recursion: before any other work
    warnings: list[str] = []
    # Given a ModelProto, the checker looks for external data relative to the working
    # directory; given the path it looks beside the model, where the data is.
    external = base_dir is not None and any(
        onnx.external_data_helper.uses_external_data(t) for t in proto.graph.initializer)
    try:
        onnx.checker.check_model(str(model) if external else _checkable(proto, views),
                                 full_check=False)
    except Exception as exc:  # noqa: BLE001 - advisory: onnx raises assorted types (C++ too)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        warnings.append(f"onnx.checker: {first}")
    graph = proto.graph
    opsets = _opsets(proto, label)

    constants: dict[str, np.ndarray] = {}
    for index, tensor in enumerate(graph.initializer):
        view = views.get(index)
        constants[tensor.name] = tensor_to_array(tensor, base_dir, label) if view is None \
            else tensor_view(tensor.name, tensor.data_type, list(tensor.dims), view, label)
    for sparse in graph.sparse_initializer:
        constants[sparse.values.name] = _sparse_to_array(sparse, base_dir, label)

    declared = [value_info(vi) for vi in graph.input if vi.name not in constants]
    try:
        inputs, notes = resolve_inputs(declared, free_dims or {}, input_shapes or {}, label,
                                       input_dims or {}, implied_sizes(proto, declared))
    except UnresolvedDimensions as exc:  # what a size search needs (conversion.size_search)
        exc.declared = tuple((vi.name, None if vi.shape is None else tuple(vi.shape))
                             for vi in declared)
        exc.node_count = len(graph.node)
        raise
    warnings.extend(notes)
    inputs, pinned = pin_values(inputs, pin_inputs or {})
    constants.update(pinned)

    nodes: list[Node] = []
    defined = {vi.name for vi in inputs} | set(constants) | {""}
    for index in topological_order(graph.node, defined):
        np_node = graph.node[index]
        domain = "" if np_node.domain in ("", "ai.onnx") else np_node.domain
        name = np_node.name or f"{np_node.op_type}_{index}"
        if domain not in opsets:
            raise InvalidModel(f"node {name!r} ({np_node.op_type}) uses domain {domain!r} "
                               "that the model does not import (opset_import)")
        node = make_node(np_node, opsets, index, base_dir, label, name=name)
        if node.op_type == "Constant" and domain == "":
            constants[node.outputs[0]] = constant_node_value(node)
        nodes.append(node)
        defined.update(np_node.output)

    outputs = tuple(value_info(vi) for vi in graph.output)
    for what, infos in (("input", declared), ("output", outputs)):
        unnamed = [i for i, vi in enumerate(infos) if not vi.name]
        if unnamed:
            raise InvalidModel(f"graph {what} {unnamed[0]} has an empty name")
    for out in outputs:
        if out.name not in defined:
            raise InvalidModel(f"graph output {out.name!r} is not produced by any node, "
                               "input or initializer")
    return SourceGraph(graph.name, tuple(inputs), outputs, tuple(nodes),
                       MappingProxyType(constants), MappingProxyType(opsets), "onnx",
                       f"{proto.producer_name} {proto.producer_version}".strip(),
                       tuple(warnings), MappingProxyType(model_functions(proto)), base_dir)


def model_functions(proto: onnx.ModelProto) -> dict[tuple[str, str], onnx.FunctionProto]:
    """Model-local functions keyed by (domain, name); "ai.onnx" is normalised to ""."""
    out: dict[tuple[str, str], onnx.FunctionProto] = {}
    for fn in proto.functions:
        domain = "" if fn.domain in ("", "ai.onnx") else fn.domain
        out.setdefault((domain, fn.name), fn)
    return out


def make_node(np_node: onnx.NodeProto, opsets: Mapping[str, int], index: int = 0,
              base_dir: Path | None = None, label: str = "", name: str | None = None) -> Node:
    """A `Node` from a NodeProto: version from `opsets` (by the node's domain), attributes
    with the schema defaults filled in. `name` overrides the node's own name."""
    domain = "" if np_node.domain in ("", "ai.onnx") else np_node.domain
    if domain not in opsets:
        raise InvalidModel(f"node {np_node.name or np_node.op_type!r} ({np_node.op_type}) uses "
                           f"domain {domain!r} that is not imported (opset_import)")
    version = opsets[domain]
    try:
        attrs = node_attributes(np_node, version, domain, base_dir, label)
    except InvalidModel as exc:  # name the node (keeping the error's class)
        exc.message = f"node {quoted(name or np_node.name or np_node.op_type)} " \
                      f"({np_node.op_type}): {exc.message}"
        exc.args = (exc.message,)
        raise
    return Node(np_node.op_type, domain, version, name or np_node.name or
                f"{np_node.op_type}_{index}", tuple(np_node.input), tuple(np_node.output),
                MappingProxyType(attrs), index, np_node)


def _opsets(proto: onnx.ModelProto, label: str) -> dict[str, int]:
    opsets: dict[str, int] = {}
    for entry in proto.opset_import:
        domain = "" if entry.domain in ("", "ai.onnx") else entry.domain
        opsets[domain] = int(entry.version)
    if "" not in opsets and any(n.domain in ("", "ai.onnx") for n in proto.graph.node):
        raise InvalidModel(f"{label} has default-domain nodes but no default opset_import")
    return opsets
