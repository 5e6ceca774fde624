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

Restrictions: only ops of the default ONNX domain; no control flow (If, Loop, Scan: their
bodies are graphs); attribute values are int, float, str, tuples of one of those, or tensors
(no graph or sparse-tensor attributes); constants and tensors have one of `DATA_TYPES`.
`from_json` validates everything a hostile file could get wrong (types, sizes within
`LIMITS`, names, every input defined before use, known ops) and raises `HostStepsError`, a
one-line ValueError, never another exception.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

FORMAT = "webnn-host-steps"
VERSION = 1

DATA_TYPES: dict[str, np.dtype[Any]] = {
    name: np.dtype(name).newbyteorder("<") for name in (
        "float32", "float16", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32",
        "int64", "uint64", "bool")}
"""The data types of constants and tensor attributes (WebNN/ONNX lower-case names), as
little-endian numpy dtypes."""

CONTROL_FLOW = frozenset({"If", "Loop", "Scan", "SequenceMap"})
"""Ops whose attributes are graphs: refused in host steps."""


@dataclass(frozen=True)
class Limits:
    """The bounds `from_json` enforces (a file over them is refused, nothing allocated)."""

    nodes: int = 100_000
    name_chars: int = 1_024
    node_arity: int = 1_024
    attributes: int = 256
    list_items: int = 1_000_000
    rank: int = 16
    tensor_bytes: int = 1 << 30
    total_bytes: int = 2 << 30


LIMITS = Limits()

_OP = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_INT64 = (-(1 << 63), (1 << 63) - 1)
_FLOAT_WORDS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


class HostStepsError(ValueError):
    """A malformed host-steps record or JSON form (one line naming the field)."""


AttributeValue = int | float | str | tuple[int, ...] | tuple[float, ...] | tuple[str, ...] \
    | np.ndarray


@dataclass(frozen=True)
class HostInput:
    """A value the host steps take: `source` "graph" (an output of the WebNN graph, the
    boundary value) or "input" (a model input, fed by the caller)."""

    name: str
    source: Literal["graph", "input"]


@dataclass(frozen=True, eq=False)
class HostNode:
    """One ONNX node run on the host. `inputs` may hold "" (an omitted optional input);
    `attributes` values are int, float, str, tuples of one of those, or read-only arrays
    (tensor attributes); bytes are decoded as UTF-8, numpy scalars made Python numbers,
    lists made tuples."""

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
        if self.op in CONTROL_FLOW:
            raise HostStepsError(f"host step {self.name!r}: control flow ({self.op}) cannot "
                                 "run as a host step")
        object.__setattr__(self, "domain", "")
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "outputs", tuple(self.outputs))
        attrs = {str(k): _attribute(self.name, str(k), v) for k, v in self.attributes.items()}
        object.__setattr__(self, "attributes", MappingProxyType(attrs))


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
            if _type_name(arr.dtype) is None:
                raise HostStepsError(f"host constant {name!r}: data type {arr.dtype} is not "
                                     f"one of {', '.join(DATA_TYPES)}")
            arr.setflags(write=False)
            consts[name] = arr
        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "outputs", tuple(self.outputs))
        object.__setattr__(self, "constants", MappingProxyType(consts))
        object.__setattr__(self, "opsets", MappingProxyType(dict(self.opsets)))
        _check_order(self)

    @property
    def graph_inputs(self) -> tuple[str, ...]:
        """The WebNN graph outputs the host steps read (boundary values)."""
        return tuple(i.name for i in self.inputs if i.source == "graph")

    @property
    def model_inputs(self) -> tuple[str, ...]:
        """The model inputs the host steps read."""
        return tuple(i.name for i in self.inputs if i.source == "input")

    def op_counts(self) -> dict[str, int]:
        """{op: number of host nodes}, most frequent first (ties by name)."""
        counts: dict[str, int] = {}
        for node in self.nodes:
            counts[node.op] = counts.get(node.op, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

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
            "constants": {name: _tensor_json(arr) for name, arr in self.constants.items()},
            "nodes": [{"name": n.name, "op": n.op, "domain": n.domain,
                       "inputs": list(n.inputs), "outputs": list(n.outputs),
                       "attributes": {k: _attribute_json(v) for k, v in n.attributes.items()}}
                      for n in self.nodes],
        }

    @classmethod
    def from_json(cls, data: Any, limits: Limits = LIMITS) -> HostSteps:
        """The `HostSteps` of a JSON form, validated (module docstring); HostStepsError (one
        line) for anything malformed, over `limits`, or an op unknown to ONNX's default
        domain."""
        try:
            return _from_json(data, limits)
        except HostStepsError:
            raise
        except (ValueError, TypeError, KeyError, OverflowError, MemoryError) as e:
            raise HostStepsError(f"host steps: malformed ({type(e).__name__}: "
                                 f"{str(e).splitlines()[0] if str(e) else ''})") from None


# ---------------------------------------------------------------- records

def _type_name(dtype: np.dtype[Any]) -> str | None:
    name = dtype.name
    return name if name in DATA_TYPES else None


def _attribute(node: str, key: str, value: Any) -> AttributeValue:
    if isinstance(value, np.ndarray):
        if _type_name(value.dtype) is None:
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


def _check_order(steps: HostSteps) -> None:
    defined: set[str] = set()
    for name in [*(i.name for i in steps.inputs), *steps.constants]:
        if not name or name in defined:
            raise HostStepsError(f"host steps: value {name!r} is defined twice or empty")
        defined.add(name)
    for node in steps.nodes:
        for name in node.inputs:
            if name and name not in defined:
                raise HostStepsError(f"host step {node.name!r} ({node.op}): input {name!r} "
                                     "is not defined before it")
        for name in node.outputs:
            if name and name in defined:
                raise HostStepsError(f"host step {node.name!r} ({node.op}): output {name!r} "
                                     "is defined twice")
            defined.add(name)
    for name in steps.outputs:
        if name not in defined:
            raise HostStepsError(f"host steps: output {name!r} is never defined")


# ---------------------------------------------------------------- JSON

def _tensor_json(arr: np.ndarray) -> dict[str, Any]:
    name = _type_name(arr.dtype)
    assert name is not None
    data = np.ascontiguousarray(arr, dtype=DATA_TYPES[name]).tobytes()
    return {"dataType": name, "shape": list(arr.shape),
            "base64": base64.b64encode(data).decode("ascii")}


def _float_json(x: float) -> float | str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def _attribute_json(value: AttributeValue) -> dict[str, Any]:
    if isinstance(value, np.ndarray):
        return {"tensor": _tensor_json(value)}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, float):
        return {"float": _float_json(value)}
    if isinstance(value, str):
        return {"string": value}
    if all(isinstance(v, int) for v in value):
        return {"ints": list(value)}
    if all(isinstance(v, float) for v in value):
        return {"floats": [_float_json(v) for v in value]}  # type: ignore[arg-type]
    return {"strings": list(value)}


class _Budget:
    """The bytes of tensors decoded so far, against `Limits.total_bytes`."""

    def __init__(self, limits: Limits) -> None:
        self.limits, self.used = limits, 0


def _where(what: str, problem: str) -> HostStepsError:
    return HostStepsError(f"host steps: {what}: {problem}")


def _obj(value: Any, what: str, keys: Iterable[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _where(what, f"expected an object, got {type(value).__name__}")
    missing = [k for k in keys if k not in value]
    if missing:
        raise _where(what, f"missing {', '.join(missing)}")
    return value


def _list(value: Any, what: str, most: int) -> list[Any]:
    if not isinstance(value, list):
        raise _where(what, f"expected a list, got {type(value).__name__}")
    if len(value) > most:
        raise _where(what, f"{len(value)} items, over the limit of {most}")
    return value


def _name(value: Any, what: str, limits: Limits, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise _where(what, f"expected a string, got {type(value).__name__}")
    if len(value) > limits.name_chars:
        raise _where(what, f"name longer than {limits.name_chars} characters")
    if not value and not empty:
        raise _where(what, "empty name")
    if any(ord(c) < 32 for c in value):
        raise _where(what, "name holds control characters")
    return value


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _where(what, f"expected an integer, got {type(value).__name__}")
    if not _INT64[0] <= value <= _INT64[1]:
        raise _where(what, "integer outside the int64 range")
    return value


def _float(value: Any, what: str) -> float:
    if isinstance(value, str) and value in _FLOAT_WORDS:
        return _FLOAT_WORDS[value]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _where(what, f"expected a number, got {type(value).__name__}")
    return float(value)


def _tensor(value: Any, what: str, budget: _Budget) -> np.ndarray:
    limits = budget.limits
    obj = _obj(value, what, ("dataType", "shape", "base64"))
    dtype = DATA_TYPES.get(obj["dataType"]) if isinstance(obj["dataType"], str) else None
    if dtype is None:
        raise _where(what, f"unknown dataType {str(obj['dataType'])[:40]!r}")
    shape = tuple(_int(d, f"{what} shape") for d in _list(obj["shape"], f"{what} shape",
                                                          limits.rank))
    if any(d < 0 for d in shape):
        raise _where(what, f"negative dimension in shape {list(shape)}")
    nbytes = dtype.itemsize
    for d in shape:
        nbytes *= d
        if nbytes > limits.tensor_bytes:
            raise _where(what, f"shape {list(shape)} is over the limit of "
                               f"{limits.tensor_bytes} bytes")
    budget.used += nbytes
    if budget.used > limits.total_bytes:
        raise _where(what, f"tensors over the total limit of {limits.total_bytes} bytes")
    text = obj["base64"]
    if not isinstance(text, str) or len(text) != 4 * ((nbytes + 2) // 3):
        raise _where(what, f"base64 data does not hold the {nbytes} bytes of "
                           f"{obj['dataType']}{list(shape)}")
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise _where(what, "bad base64 data") from None
    if len(data) != nbytes:
        raise _where(what, f"base64 data holds {len(data)} bytes, {obj['dataType']}"
                           f"{list(shape)} needs {nbytes}")
    arr = np.frombuffer(data, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="))
    return arr


_ATTRIBUTE_KINDS = ("int", "float", "string", "ints", "floats", "strings", "tensor")


def _attribute_from(value: Any, what: str, budget: _Budget) -> AttributeValue:
    limits = budget.limits
    if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in \
            _ATTRIBUTE_KINDS:
        raise _where(what, f"expected one of {{{', '.join(_ATTRIBUTE_KINDS)}: ...}}")
    kind, v = next(iter(value.items()))
    if kind == "int":
        return _int(v, what)
    if kind == "float":
        return _float(v, what)
    if kind == "string":
        if not isinstance(v, str) or len(v) > limits.list_items:
            raise _where(what, "expected a string within the limits")
        return v
    if kind == "tensor":
        return _tensor(v, what, budget)
    items = _list(v, what, limits.list_items)
    if kind == "ints":
        return tuple(_int(x, what) for x in items)
    if kind == "floats":
        return tuple(_float(x, what) for x in items)
    if not all(isinstance(x, str) and len(x) <= limits.name_chars for x in items):
        raise _where(what, "expected a list of strings within the limits")
    return tuple(items)


def _known_op(op: str, version: int) -> bool:
    import onnx.defs

    try:
        onnx.defs.get_schema(op, version, "")
    except onnx.defs.SchemaError:
        return False
    return True


def _from_json(data: Any, limits: Limits) -> HostSteps:
    obj = _obj(data, "file", ("format", "version", "opsets", "inputs", "outputs",
                              "constants", "nodes"))
    if obj["format"] != FORMAT:
        raise _where("format", f"expected {FORMAT!r}")
    if obj["version"] != VERSION or isinstance(obj["version"], bool):
        raise _where("version", f"expected {VERSION}, this converter reads version {VERSION}")
    opsets_obj = _obj(obj["opsets"], "opsets", ("",))
    opsets = {}
    for domain, version in opsets_obj.items():
        if domain not in ("", "ai.onnx"):
            raise _where("opsets", f"domain {domain[:40]!r} is not the default ONNX domain")
        version = _int(version, f"opsets[{domain!r}]")
        if not 1 <= version <= 1000:
            raise _where("opsets", f"version {version} out of range")
        opsets[domain] = version
    budget = _Budget(limits)
    inputs = []
    for k, item in enumerate(_list(obj["inputs"], "inputs", limits.node_arity)):
        item = _obj(item, f"inputs[{k}]", ("name", "source"))
        if item["source"] not in ("graph", "input"):
            raise _where(f"inputs[{k}]", "source must be 'graph' or 'input'")
        inputs.append(HostInput(_name(item["name"], f"inputs[{k}] name", limits),
                                item["source"]))
    outputs = tuple(_name(o, "outputs", limits)
                    for o in _list(obj["outputs"], "outputs", limits.node_arity))
    constants_obj = _obj(obj["constants"], "constants", ())
    constants = {_name(k, "constant", limits): _tensor(v, f"constant {k[:80]!r}", budget)
                 for k, v in constants_obj.items()}
    nodes = []
    version = opsets.get("", opsets.get("ai.onnx", 17))
    for k, item in enumerate(_list(obj["nodes"], "nodes", limits.nodes)):
        item = _obj(item, f"nodes[{k}]", ("name", "op", "domain", "inputs", "outputs",
                                          "attributes"))
        name = _name(item["name"], f"nodes[{k}] name", limits, empty=True)
        what = f"node {name[:80]!r}"
        op = item["op"]
        if not isinstance(op, str) or not _OP.match(op) or len(op) > 100:
            raise _where(what, f"op {str(op)[:40]!r} is not an op name")
        if item["domain"] not in ("", "ai.onnx"):
            raise _where(what, f"domain {str(item['domain'])[:40]!r} is not the default "
                               "ONNX domain")
        if op in CONTROL_FLOW:
            raise _where(what, f"control flow ({op}) cannot run as a host step")
        if not _known_op(op, version):
            raise _where(what, f"unknown op {op!r} (ONNX default domain, opset {version})")
        ins = tuple(_name(x, f"{what} input", limits, empty=True)
                    for x in _list(item["inputs"], f"{what} inputs", limits.node_arity))
        outs = tuple(_name(x, f"{what} output", limits, empty=True)
                     for x in _list(item["outputs"], f"{what} outputs", limits.node_arity))
        attrs_obj = _obj(item["attributes"], f"{what} attributes", ())
        if len(attrs_obj) > limits.attributes:
            raise _where(what, f"over {limits.attributes} attributes")
        attrs = {_name(key, f"{what} attribute", limits):
                 _attribute_from(v, f"{what} attribute {key[:80]!r}", budget)
                 for key, v in attrs_obj.items()}
        nodes.append(HostNode(name, op, "", ins, outs, attrs))
    return HostSteps(tuple(nodes), constants, tuple(inputs), outputs, opsets)
