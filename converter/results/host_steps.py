"""Host steps: the ONNX nodes of a model's data-dependent tail, run on the host after the WebNN
graph (docs/host-steps.md).

A model whose tail has data-dependent shapes (NonZero, NonMaxSuppression, Compress, Unique,
TopK with a run-time k, Reshape with a run-time shape, ...) converts to one static WebNN graph
plus `HostSteps`: the remaining nodes in the order they run, the constants they read, the
values they take (`HostInput`: a graph output, the "boundary" value, or a model input fed by
the caller) and the model outputs they give. Python runs them with onnx's reference evaluator
(`converter.runtimes.host`), the generated JavaScript with plain JS op implementations; both
read the JSON form of `HostSteps.to_json` / `HostSteps.from_json`:

    {"format": "webnn-host-steps", "version": 1, "opsets": {"": 17},
     "inputs": [{"name": "scores", "source": "graph"}, {"name": "image", "source": "input"}],
     "outputs": ["boxes"],
     "constants": {"k": {"dataType": "int64", "shape": [1], "base64": "..."}},
     "nodes": [{"name": "/NonZero", "op": "NonZero", "domain": "", "inputs": ["mask"],
                "outputs": ["idx"], "attributes": {"axis": {"int": -1}}}]}

An `If` node's branches are `HostGraph`s, in JSON `{"graph": {"inputs": [], "outputs":
[...], "nodes": [...]}}`; their nodes may read any value defined before the `If` (ONNX's
outer-scope reads); values they define stay inside.

Restrictions: only ops of the default ONNX domain; no Loop, Scan or SequenceMap (`REFUSED`);
graph attributes only on `If`, nested at most `Limits.nesting` deep; attribute values are
int, float, str, tuples of one of those, tensors or graphs (no sparse tensors, no lists of
tensors or graphs); constants and tensors have one of `DATA_TYPES`.
`from_json` validates everything a hostile file could get wrong (types, sizes within
`LIMITS`, names, every input defined before use, known ops) and raises `HostStepsError`, a
one-line ValueError, never another exception.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from converter.results.host_json import (
    DATA_TYPES,
    LIMITS,
    HostStepsError,
    Limits,
    Reader,
    float_json,
    tensor_json,
    type_name,
    where,
)

__all__ = ["DATA_TYPES", "FORMAT", "LIMITS", "REFUSED", "VERSION", "HostGraph", "HostInput",
           "HostNode", "HostSteps", "HostStepsError", "Limits"]

FORMAT = "webnn-host-steps"
VERSION = 1

REFUSED = frozenset({"Loop", "Scan", "SequenceMap"})
"""Control-flow ops refused in host steps (`If` is run, its branches as `HostGraph`s)."""

_GRAPH_OPS = frozenset({"If"})
"""The ops whose attributes may be graphs."""

_OP_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


@dataclass(frozen=True)
class HostInput:
    """A value the host steps take: `source` "graph" (an output of the WebNN graph, the
    boundary value) or "input" (a model input, fed by the caller)."""

    name: str
    source: Literal["graph", "input"]


@dataclass(frozen=True, eq=False)
class HostGraph:
    """A subgraph attribute (an `If` branch): `nodes` run in order, reading `inputs`, their
    own outputs and any value defined before the node that holds the graph; `outputs` are
    what it gives."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    nodes: tuple[HostNode, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "outputs", tuple(self.outputs))
        object.__setattr__(self, "nodes", tuple(self.nodes))


AttributeValue = int | float | str | tuple[int, ...] | tuple[float, ...] | tuple[str, ...] \
    | np.ndarray | HostGraph


@dataclass(frozen=True, eq=False)
class HostNode:
    """One ONNX node run on the host. `inputs` may hold "" (an omitted optional input);
    `attributes` values are int, float, str, tuples of one of those, read-only arrays
    (tensor attributes) or `HostGraph`s (an `If`'s branches); bytes are decoded as UTF-8,
    numpy scalars made Python numbers, lists made tuples."""

    name: str
    op: str
    domain: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attributes: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.domain not in ("", "ai.onnx"):
            raise HostStepsError(f"host step {self.name!r}: op {self.domain}::{self.op} is "
                                 "not of the default ONNX domain")
        if self.op in REFUSED:
            raise HostStepsError(f"host step {self.name!r}: control flow ({self.op}) cannot "
                                 "run as a host step")
        object.__setattr__(self, "domain", "")
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "outputs", tuple(self.outputs))
        attrs = {str(k): _attribute(self.name, str(k), v) for k, v in self.attributes.items()}
        if self.op not in _GRAPH_OPS and any(isinstance(v, HostGraph) for v in attrs.values()):
            raise HostStepsError(f"host step {self.name!r}: graph attributes only on "
                                 f"{', '.join(sorted(_GRAPH_OPS))}")
        object.__setattr__(self, "attributes", MappingProxyType(attrs))

    @property
    def graphs(self) -> tuple[HostGraph, ...]:
        """The node's subgraphs (an `If`'s branches)."""
        return tuple(v for v in self.attributes.values() if isinstance(v, HostGraph))

    def reads(self) -> list[str]:
        """Every value the node reads: its inputs and, in its subgraphs, the values defined
        outside them (outer-scope reads)."""
        return [*(i for i in self.inputs if i), *(n for g in self.graphs for n in _captures(g))]


@dataclass(frozen=True, eq=False)
class HostSteps:
    """The host steps of a model: `nodes` run in order after the WebNN graph, reading
    `constants`, the values `inputs` names and earlier nodes' outputs; `outputs` are the
    model outputs they give (in model order). `opsets` maps ONNX domains to versions (the
    source model's). Made consistent on construction: HostStepsError when a node reads a value
    nothing defined before it, a value is defined twice or an output is never defined."""

    nodes: tuple[HostNode, ...]
    constants: Mapping[str, np.ndarray]
    inputs: tuple[HostInput, ...]
    outputs: tuple[str, ...]
    opsets: Mapping[str, int] = field(default_factory=lambda: {"": 17})

    def __post_init__(self) -> None:
        consts = {}
        for name, value in self.constants.items():
            arr = np.array(value)
            if type_name(arr.dtype) is None:
                raise HostStepsError(f"host constant {name!r}: data type {arr.dtype} is not "
                                     f"one of {', '.join(DATA_TYPES)}")
            arr.setflags(write=False)
            consts[name] = arr
        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "outputs", tuple(self.outputs))
        object.__setattr__(self, "constants", MappingProxyType(consts))
        object.__setattr__(self, "opsets", MappingProxyType(dict(self.opsets)))
        defined: set[str] = set()
        for name in [*(i.name for i in self.inputs), *consts]:
            if not name or name in defined:
                raise HostStepsError(f"host steps: value {name!r} is defined twice or empty")
            defined.add(name)
        _check_order(self.nodes, defined, 0)
        for name in self.outputs:
            if name not in defined:
                raise HostStepsError(f"host steps: output {name!r} is never defined")

    @property
    def graph_inputs(self) -> tuple[str, ...]:
        """The WebNN graph outputs the host steps read (boundary values)."""
        return tuple(i.name for i in self.inputs if i.source == "graph")

    @property
    def model_inputs(self) -> tuple[str, ...]:
        """The model inputs the host steps read."""
        return tuple(i.name for i in self.inputs if i.source == "input")

    def op_counts(self) -> dict[str, int]:
        """{op: number of host nodes} (not counting the nodes inside `If` branches), most
        frequent first (ties by name)."""
        counts: dict[str, int] = {}
        for node in self.nodes:
            counts[node.op] = counts.get(node.op, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def op_types(self) -> frozenset[str]:
        """Every op type the steps run, in `If` branches too."""
        found: set[str] = set()
        todo = list(self.nodes)
        while todo:
            node = todo.pop()
            found.add(node.op)
            todo.extend(n for g in node.graphs for n in g.nodes)
        return frozenset(found)

    def summary(self) -> str:
        """The report line: "host steps: N node(s) run on the host after the WebNN graph
        (NonZero x2, Gather x1)"."""
        ops = ", ".join(f"{op} x{n}" for op, n in self.op_counts().items())
        return (f"host steps: {len(self.nodes)} node(s) run on the host after the WebNN "
                f"graph ({ops})")

    def to_json(self) -> dict[str, Any]:
        """The JSON form (module docstring); non-finite floats as "NaN"/"Infinity"/
        "-Infinity", tensors as little-endian base64."""
        return {
            "format": FORMAT, "version": VERSION,
            "opsets": dict(self.opsets),
            "inputs": [{"name": i.name, "source": i.source} for i in self.inputs],
            "outputs": list(self.outputs),
            "constants": {name: tensor_json(arr) for name, arr in self.constants.items()},
            "nodes": [_node_json(n) for n in self.nodes],
        }

    @classmethod
    def from_json(cls, data: Any, limits: Limits = LIMITS) -> HostSteps:
        """The `HostSteps` of a JSON form, validated (module docstring); HostStepsError (one
        line) for anything malformed, over `limits`, or an op unknown to ONNX's default
        domain."""
        try:
            return _from_json(data, Reader(limits))
        except HostStepsError:
            raise
        except (ValueError, TypeError, KeyError, OverflowError, MemoryError,
                RecursionError) as e:
            raise HostStepsError(f"host steps: malformed ({type(e).__name__}: "
                                 f"{str(e).splitlines()[0] if str(e) else ''})") from None


# ---------------------------------------------------------------- records

def _attribute(node: str, key: str, value: Any) -> AttributeValue:
    if isinstance(value, HostGraph):
        return value
    if isinstance(value, np.ndarray):
        if type_name(value.dtype) is None:
            raise HostStepsError(f"host step {node!r}: attribute {key!r} has data type "
                                 f"{value.dtype}, not one of {', '.join(DATA_TYPES)}")
        arr = np.array(value)
        arr.setflags(write=False)
        return arr
    scalar = _scalar(value)
    if scalar is not None:
        return scalar
    if isinstance(value, list | tuple):
        items = tuple(_scalar(v) for v in value)
        kinds = {type(v) for v in items}
        if None in items or len(kinds) > 1:
            if kinds <= {int, float} and None not in items:
                return tuple(float(v) for v in items)  # type: ignore[arg-type]
            raise HostStepsError(f"host step {node!r}: attribute {key!r} is a list of mixed "
                                 "or unsupported values")
        return items  # type: ignore[return-value]
    raise HostStepsError(f"host step {node!r}: attribute {key!r} has an unsupported value "
                         f"({type(value).__name__})")


def _scalar(value: Any) -> int | float | str | None:
    if isinstance(value, bool | np.bool_):
        return int(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise HostStepsError("host step attribute: a string attribute is not UTF-8") \
                from None
    return None


def _captures(graph: HostGraph) -> list[str]:
    """The values `graph`'s nodes read that it does not define (outer-scope reads)."""
    inner = set(graph.inputs)
    out: list[str] = []
    for node in graph.nodes:
        out.extend(n for n in node.reads() if n not in inner and n not in out)
        inner.update(node.outputs)
    out.extend(n for n in graph.outputs if n not in inner and n not in out)
    return out


def _check_order(nodes: Iterable[HostNode], defined: set[str], depth: int) -> None:
    """Every node reads values defined before it (`defined` grows with their outputs);
    subgraphs see `defined` plus their own values."""
    if depth > LIMITS.nesting:
        raise HostStepsError(f"host steps: subgraphs nested over {LIMITS.nesting} deep")
    for node in nodes:
        for name in node.inputs:
            if name and name not in defined:
                raise HostStepsError(f"host step {node.name!r} ({node.op}): input {name!r} "
                                     "is not defined before it")
        for graph in node.graphs:
            inner = defined | set(graph.inputs)
            _check_order(graph.nodes, inner, depth + 1)
            missing = [o for o in graph.outputs if o not in inner]
            if missing:
                raise HostStepsError(f"host step {node.name!r} ({node.op}): subgraph output "
                                     f"{missing[0]!r} is never defined")
        for name in node.outputs:
            if name and name in defined:
                raise HostStepsError(f"host step {node.name!r} ({node.op}): output {name!r} "
                                     "is defined twice")
            defined.add(name)


# ---------------------------------------------------------------- JSON

def _node_json(node: HostNode) -> dict[str, Any]:
    return {"name": node.name, "op": node.op, "domain": node.domain,
            "inputs": list(node.inputs), "outputs": list(node.outputs),
            "attributes": {k: _attribute_json(v) for k, v in node.attributes.items()}}


def _attribute_json(value: AttributeValue) -> dict[str, Any]:
    if isinstance(value, HostGraph):
        return {"graph": {"inputs": list(value.inputs), "outputs": list(value.outputs),
                          "nodes": [_node_json(n) for n in value.nodes]}}
    if isinstance(value, np.ndarray):
        return {"tensor": tensor_json(value)}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, float):
        return {"float": float_json(value)}
    if isinstance(value, str):
        return {"string": value}
    if all(isinstance(v, int) for v in value):
        return {"ints": list(value)}
    if all(isinstance(v, float) for v in value):
        return {"floats": [float_json(v) for v in value]}  # type: ignore[arg-type]
    return {"strings": list(value)}


_ATTRIBUTE_KINDS = ("int", "float", "string", "ints", "floats", "strings", "tensor", "graph")


def _attribute_from(value: Any, what: str, r: Reader, version: int, depth: int
                    ) -> AttributeValue:
    limits = r.limits
    if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in \
            _ATTRIBUTE_KINDS:
        raise where(what, f"expected one of {{{', '.join(_ATTRIBUTE_KINDS)}: ...}}")
    kind, v = next(iter(value.items()))
    if kind == "int":
        return r.int(v, what)
    if kind == "float":
        return r.float(v, what)
    if kind == "string":
        if not isinstance(v, str) or len(v) > limits.list_items:
            raise where(what, "expected a string within the limits")
        return v
    if kind == "tensor":
        return r.tensor(v, what)
    if kind == "graph":
        if depth >= limits.nesting:
            raise where(what, f"subgraphs nested over {limits.nesting} deep")
        g = r.obj(v, what, ("inputs", "outputs", "nodes"))
        return HostGraph(
            tuple(r.name(x, f"{what} input") for x in r.list(g["inputs"], what,
                                                             limits.node_arity)),
            tuple(r.name(x, f"{what} output") for x in r.list(g["outputs"], what,
                                                              limits.node_arity)),
            _nodes_from(g["nodes"], r, version, depth + 1))
    items = r.list(v, what, limits.list_items)
    if kind == "ints":
        return tuple(r.int(x, what) for x in items)
    if kind == "floats":
        return tuple(r.float(x, what) for x in items)
    if not all(isinstance(x, str) and len(x) <= limits.name_chars for x in items):
        raise where(what, "expected a list of strings within the limits")
    return tuple(items)


def _known_op(op: str, version: int) -> bool:
    import onnx.defs

    try:
        onnx.defs.get_schema(op, version, "")
    except onnx.defs.SchemaError:
        return False
    return True


def _nodes_from(items: Any, r: Reader, version: int, depth: int) -> tuple[HostNode, ...]:
    limits = r.limits
    nodes = []
    for k, item in enumerate(r.list(items, "nodes", limits.nodes)):
        item = r.obj(item, f"nodes[{k}]", ("name", "op", "domain", "inputs", "outputs",
                                           "attributes"))
        name = r.name(item["name"], f"nodes[{k}] name", empty=True)
        what = f"node {name[:80]!r}"
        r.count_node(what)
        op = item["op"]
        if not isinstance(op, str) or not op or len(op) > 100 or not set(op) <= _OP_CHARS \
                or not op[0].isalpha():
            raise where(what, f"op {str(op)[:40]!r} is not an op name")
        if item["domain"] not in ("", "ai.onnx"):
            raise where(what, f"domain {str(item['domain'])[:40]!r} is not the default "
                              "ONNX domain")
        if op in REFUSED:
            raise where(what, f"control flow ({op}) cannot run as a host step")
        if not _known_op(op, version):
            raise where(what, f"unknown op {op!r} (ONNX default domain, opset {version})")
        ins = tuple(r.name(x, f"{what} input", empty=True)
                    for x in r.list(item["inputs"], f"{what} inputs", limits.node_arity))
        outs = tuple(r.name(x, f"{what} output", empty=True)
                     for x in r.list(item["outputs"], f"{what} outputs", limits.node_arity))
        attrs_obj = r.obj(item["attributes"], f"{what} attributes")
        if len(attrs_obj) > limits.attributes:
            raise where(what, f"over {limits.attributes} attributes")
        attrs = {r.name(key, f"{what} attribute"):
                 _attribute_from(v, f"{what} attribute {key[:80]!r}", r, version, depth)
                 for key, v in attrs_obj.items()}
        nodes.append(HostNode(name, op, "", ins, outs, attrs))
    return tuple(nodes)


def _from_json(data: Any, r: Reader) -> HostSteps:
    limits = r.limits
    obj = r.obj(data, "file", ("format", "version", "opsets", "inputs", "outputs",
                               "constants", "nodes"))
    if obj["format"] != FORMAT:
        raise where("format", f"expected {FORMAT!r}")
    if obj["version"] != VERSION or isinstance(obj["version"], bool):
        raise where("version", f"expected {VERSION}, this converter reads version {VERSION}")
    opsets: dict[str, int] = {}
    for domain, version in r.obj(obj["opsets"], "opsets", ("",)).items():
        if domain not in ("", "ai.onnx"):
            raise where("opsets", f"domain {domain[:40]!r} is not the default ONNX domain")
        version = r.int(version, f"opsets[{domain!r}]")
        if not 1 <= version <= 1000:
            raise where("opsets", f"version {version} out of range")
        opsets[domain] = version
    inputs = []
    for k, item in enumerate(r.list(obj["inputs"], "inputs", limits.node_arity)):
        item = r.obj(item, f"inputs[{k}]", ("name", "source"))
        if item["source"] not in ("graph", "input"):
            raise where(f"inputs[{k}]", "source must be 'graph' or 'input'")
        inputs.append(HostInput(r.name(item["name"], f"inputs[{k}] name"), item["source"]))
    outputs = tuple(r.name(o, "outputs") for o in r.list(obj["outputs"], "outputs",
                                                          limits.node_arity))
    constants = {r.name(k, "constant"): r.tensor(v, f"constant {k[:80]!r}")
                 for k, v in r.obj(obj["constants"], "constants").items()}
    version = opsets.get("", opsets.get("ai.onnx", 17))
    nodes = _nodes_from(obj["nodes"], r, version, 0)
    return HostSteps(nodes, constants, tuple(inputs), outputs, opsets)
