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
  writes them) is sorted, stably (`topological_order`);
- lists graph inputs (initializers are not inputs) with static shapes after applying
  `input_shapes` (whole shapes by input name), `input_dims` (single axes by input name and
  axis) and `free_dims` (by `dim_param` name), most specific first; a dimension with neither
  `dim_value` nor `dim_param`, or with a negative `dim_value` (paddle2onnx writes -1), is an
  unnamed free dimension (`dim_value: 0` is a real, empty dimension); every dimension still
  unknown is listed in one `UnresolvedDimensions` error whose `fixes` name what to set;
- `pin_inputs` turns graph inputs into constants;
- constants: initializers and the outputs of `Constant` nodes, as numpy arrays in their ONNX
  dtype (bool stays bool, float64 stays float64: the importer decides what to do with them).

Restrictions: subgraph attributes (If/Loop/Scan bodies) are kept as raw `GraphProto`s (the
importer expands them); model-local functions (`ModelProto.functions`) are kept as raw
`FunctionProto`s in `SourceGraph.functions` (the importer inlines them); each `Node` keeps its
`NodeProto` (`proto`) so attribute references of function bodies can be resolved; sparse
initializers are densified; string tensors are numpy object arrays.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import AttributeProto

from converter.core.errors import InvalidModel, UnresolvedDimensions, exception_text, quoted
from converter.core.ir import Dim, Node, SourceGraph, ValueInfo
from converter.frontends.base import read_model_file
from converter.frontends.free_dims import (
    InputDims,
    check_free_dim_values,
    check_input_dims,
    fixes_for,
)
from converter.frontends.onnx.rawdata import split_raw_data, tensor_view
from converter.frontends.onnx.sizing import size_model
from converter.frontends.onnx.tensors import (
    _sparse_to_array,
    constant_node_value,
    dtype_name,
    node_attributes,
    tensor_to_array,
)
from converter.frontends.onnx.tensors import (
    safe_external_path as safe_external_path,  # used by .reference
)

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

    declared = [_value_info(vi) for vi in graph.input if vi.name not in constants]
    inputs = _resolve_inputs(declared, free_dims or {}, input_shapes or {}, label,
                             input_dims or {})
    inputs, pinned = _pin(inputs, pin_inputs or {})
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

    outputs = tuple(_value_info(vi) for vi in graph.output)
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


def topological_order(nodes: Sequence[onnx.NodeProto], defined: set[str]) -> list[int]:
    """The positions of `nodes` in an order where each node comes after the nodes that
    produce its inputs (explicit ones, and the outer values its subgraphs read): the file's
    order when it is one, else a stable topological sort (of the nodes whose inputs are
    ready, the one first in the file). `defined` holds the names available before any node
    (graph inputs, initializers, ""). InvalidModel naming the node for an input that nothing
    defines, a value defined twice (ONNX graphs are in SSA form), or a cycle."""
    if _in_file_order(nodes, defined):
        return list(range(len(nodes)))
    producer: dict[str, int] = {}
    for index, np_node in enumerate(nodes):
        for out in np_node.output:
            if not out:
                continue
            if out in defined or out in producer:
                other = ("a graph input or initializer" if out in defined else
                         f"node {_node_label(nodes[producer[out]], producer[out])}")
                raise InvalidModel(f"node {_node_label(np_node, index)} writes {out!r}, which "
                                   f"{other} also defines (each value has one definition)")
            producer[out] = index
    deps: list[set[int]] = []
    for index, np_node in enumerate(nodes):
        missing = [i for i in np_node.input if i not in defined and i not in producer]
        if missing:
            raise InvalidModel(f"node {_node_label(np_node, index)} reads {missing}, which no "
                               "node, graph input or initializer defines")
        names = set(np_node.input) | _outer_names(np_node)
        deps.append({producer[i] for i in names if i in producer})
    if all(d < index for index, before in enumerate(deps) for d in before):
        return list(range(len(nodes)))  # already in order
    waiting = [len(before) for before in deps]
    readers: list[list[int]] = [[] for _ in nodes]
    for index, before in enumerate(deps):
        for d in before:
            readers[d].append(index)
    ready = [i for i, count in enumerate(waiting) if count == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        index = heapq.heappop(ready)
        order.append(index)
        for reader in readers[index]:
            waiting[reader] -= 1
            if waiting[reader] == 0:
                heapq.heappush(ready, reader)
    if len(order) < len(nodes):  # follow unfinished inputs from a waiting node to a cycle
        done = set(order)
        index = next(i for i, count in enumerate(waiting) if count)
        path: list[int] = []
        while index not in path:
            path.append(index)
            index = min(d for d in deps[index] if d not in done)
        cycle = path[path.index(index):]
        raise InvalidModel(f"node {_node_label(nodes[index], index)} is on a cycle: its "
                           f"inputs depend on its own outputs (through {len(cycle)} node(s))")
    return order


def _in_file_order(nodes: Sequence[onnx.NodeProto], defined: set[str]) -> bool:
    """True when every node reads only values defined before it (`defined`, or outputs of
    earlier nodes) and defines only new ones, and no node has a subgraph: the file's order
    then is `topological_order`'s (one pass, no graph built). False says nothing: the full
    sort then orders the nodes or names what is wrong."""
    seen = set(defined)
    for np_node in nodes:
        if len(np_node.attribute) and any(
                a.type == AttributeProto.GRAPH or a.type == AttributeProto.GRAPHS
                for a in np_node.attribute):
            return False
        if not seen.issuperset(np_node.input):
            return False
        for out in np_node.output:
            if out:
                if out in seen:
                    return False
                seen.add(out)
    return True


def _node_label(np_node: onnx.NodeProto, index: int) -> str:
    return f"{(np_node.name or f'{np_node.op_type}_{index}')!r} ({np_node.op_type})"


def _outer_names(np_node: onnx.NodeProto) -> set[str]:
    """The names the subgraphs of `np_node` (If / Loop / Scan bodies, nested) read from
    enclosing scopes."""
    names: set[str] = set()
    for attr in np_node.attribute:
        kind = attr.type
        if kind != AttributeProto.GRAPH and kind != AttributeProto.GRAPHS:
            continue
        graphs = [attr.g] if kind == AttributeProto.GRAPH else list(attr.graphs)
        for g in graphs:
            local = ({vi.name for vi in g.input} | {t.name for t in g.initializer}
                     | {t.values.name for t in g.sparse_initializer} | {""})
            for inner in g.node:
                local.update(inner.output)
            for inner in g.node:
                names.update(i for i in inner.input if i not in local)
                names.update(n for n in _outer_names(inner) if n not in local)
    return names


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


# -- inputs and free dimensions -------------------------------------------------------------


def _value_info(vi: onnx.ValueInfoProto) -> ValueInfo:
    t = vi.type
    if not t.HasField("tensor_type"):
        kind = t.WhichOneof("value") or "unknown"
        return ValueInfo(vi.name, kind, None, None)
    tt = t.tensor_type
    dtype = dtype_name(tt.elem_type)
    if not tt.HasField("shape"):
        return ValueInfo(vi.name, dtype, None, None)
    dims: list[Dim] = []
    for d in tt.shape.dim:
        if d.HasField("dim_value") and d.dim_value >= 0:
            dims.append(int(d.dim_value))
        elif d.HasField("dim_param") and d.dim_param:
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return ValueInfo(vi.name, dtype, tuple(dims), tuple(dims))


def _resolve_inputs(declared: list[ValueInfo], free_dims: Mapping[str, int],
                    input_shapes: Mapping[str, Sequence[int]], label: str,
                    input_dims: InputDims | None = None) -> list[ValueInfo]:
    names = {vi.name for vi in declared}
    unknown_inputs = sorted(set(input_shapes) - names)
    if unknown_inputs:
        raise InvalidModel(f"shape(s) given for {unknown_inputs}, which are not graph inputs "
                           f"of {label} (inputs: {sorted(names)})")
    params = {d for vi in declared for d in (vi.shape or ()) if isinstance(d, str)}
    unknown_params = sorted(set(free_dims) - params)
    if unknown_params:
        raise InvalidModel(f"dimension name(s) {unknown_params} given, which are not free "
                           f"dimensions of {label} (free dimensions: {sorted(params)})")
    check_free_dim_values(free_dims)
    axes = check_input_dims(input_dims or {},
                            {vi.name: None if vi.shape is None else len(vi.shape)
                             for vi in declared}, label, shapes_given=input_shapes)

    resolved: list[ValueInfo] = []
    unresolved: list[str] = []
    missing: list[tuple[str, int | None]] = []
    for vi in declared:
        if vi.name in input_shapes:
            shape = tuple(int(d) for d in input_shapes[vi.name])
            if vi.shape is not None:
                _check_override(vi, shape)
            if any(d < 1 for d in shape):
                raise InvalidModel(f"the shape given for input {vi.name!r}, {list(shape)}, "
                                   "has a dimension < 1")
            resolved.append(ValueInfo(vi.name, vi.dtype, shape, vi.declared_shape))
            continue
        if vi.shape is None:
            unresolved.append(f"{vi.name}: unknown rank")
            missing.append((vi.name, None))
            resolved.append(vi)
            continue
        dims: list[Dim] = []
        for i, d in enumerate(vi.shape):
            given = axes.get(vi.name, {}).get(i)
            if given is not None:
                if isinstance(d, int) and d != given:
                    raise InvalidModel(f"dimension {vi.name}:{i} = {given} contradicts the "
                                       f"model's fixed dimension {d} ({_fmt(vi.shape)})")
                d = given
            elif isinstance(d, str) and d in free_dims:
                d = int(free_dims[d])
            if not isinstance(d, int):
                what = f"free dimension {d!r}" if isinstance(d, str) else "unnamed dimension"
                unresolved.append(f"{vi.name}[{i}] ({what})")
                missing.append((vi.name, i))
            dims.append(d)
        resolved.append(ValueInfo(vi.name, vi.dtype, tuple(dims), vi.declared_shape))
    if unresolved:
        raise UnresolvedDimensions(
            f"{len(unresolved)} input dimension(s) of {label} are not fixed: "
            + ", ".join(unresolved),
            fixes=fixes_for([(vi.name, vi.shape) for vi in declared], set(missing)))
    return resolved


def _check_override(vi: ValueInfo, shape: tuple[int, ...]) -> None:
    assert vi.shape is not None
    if len(shape) != len(vi.shape):
        raise InvalidModel(f"the shape given for input {vi.name!r} has rank {len(shape)}, "
                           f"the model declares rank {len(vi.shape)} ({_fmt(vi.shape)})")
    for i, (want, got) in enumerate(zip(vi.shape, shape, strict=True)):
        if isinstance(want, int) and want != got:
            raise InvalidModel(f"the shape given for input {vi.name!r} sets axis {i} to {got}, "
                               f"which contradicts the model's fixed dimension {want} "
                               f"({_fmt(vi.shape)})")


def _fmt(shape: Sequence[Dim]) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def _resolved_shape(vi: ValueInfo) -> tuple[int, ...]:
    """The shape of an input `_resolve_inputs` returned (every dimension an int)."""
    assert vi.shape is not None
    dims = tuple(d for d in vi.shape if isinstance(d, int))
    assert len(dims) == len(vi.shape)
    return dims


def _pin(inputs: list[ValueInfo], pins: Mapping[str, Any]
         ) -> tuple[list[ValueInfo], dict[str, np.ndarray]]:
    by_name = {vi.name: vi for vi in inputs}
    unknown = sorted(set(pins) - set(by_name))
    if unknown:
        raise InvalidModel(f"value(s) pinned for {unknown}, which are not graph inputs "
                           f"(inputs: {sorted(by_name)})")
    pinned: dict[str, np.ndarray] = {}
    for name, value in pins.items():
        vi = by_name[name]
        arr = _pin_array(name, value, vi.dtype)
        shape = _resolved_shape(vi)
        if arr.shape != shape:
            if arr.size == int(np.prod(shape, dtype=np.int64)):
                arr = arr.reshape(shape)
            else:
                raise InvalidModel(f"the value pinned for {name!r} has shape "
                                   f"{list(arr.shape)}, the input has shape {list(shape)}")
        arr.setflags(write=False)
        pinned[name] = arr
    return [vi for vi in inputs if vi.name not in pins], pinned


def _pin_array(name: str, value: Any, dtype: str) -> np.ndarray:
    """The value pinned for input `name` as an array of the input's `dtype`; InvalidModel
    when it is not numbers (for numeric inputs), or does not fit the type (integer inputs
    take whole numbers within their range)."""
    if dtype == "string":
        return np.asarray(value)
    try:
        raw = np.asarray(value)
    except (ValueError, TypeError, OverflowError) as exc:
        raise InvalidModel(f"the value pinned for {quoted(name)} is not an array of numbers "
                           f"({exception_text(exc)})") from None
    if raw.dtype.kind not in "biuf":
        raise InvalidModel(f"the value pinned for {quoted(name)} holds {raw.dtype}, not "
                           f"numbers (the input is {dtype})")
    try:
        target = np.dtype(dtype)
    except TypeError:
        raise InvalidModel(f"input {quoted(name)} is {dtype}, which cannot be pinned"
                           ) from None
    with np.errstate(all="ignore"):
        if target.kind in "iub" and raw.dtype.kind == "f" and raw.size:
            if not np.all(np.isfinite(raw)) or np.any(raw != np.round(raw)):
                raise InvalidModel(f"the value pinned for {quoted(name)} has non-integer "
                                   f"numbers; the input is {dtype}")
        if target.kind in "iu" and raw.dtype.kind in "iuf" and raw.size:
            info = np.iinfo(target)
            if raw.min() < info.min or raw.max() > info.max:
                raise InvalidModel(f"the value pinned for {quoted(name)} lies outside the "
                                   f"range of {dtype} ({info.min} to {info.max})")
        return raw.astype(target)
