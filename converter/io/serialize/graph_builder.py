"""Rebuilding a graph from its syntax tree: every declaration of a `GraphText` (from the text
or the JSON form) is replayed through a fresh `MLGraphBuilder`, so a loaded graph is validated
exactly like one built in Python; builder errors are reported at the declaration.

Lenient as the reference importer: cast's `to=` is an alias of `dataType=`, `roundingType=`
of `outputShapeRounding=` (`LEGACY_OPTIONS`); short dtype names (`f32`) are accepted as
`dataType`/`outputDataType` values; `y = x;` reads as `identity(x)`; graph outputs that name
an input or a constant are wrapped in `identity`; `dyn(...)` input dimensions take
`free_dims[name]` or their maximum. The caller-side types of a target's narrowed / widened
inputs and outputs (the manifest's or safetensors metadata's `sourceDataTypes`,
`converter.io.serialize.source_types`) become the graph's `narrowed_inputs` / `narrowed_outputs`.

4-bit constants (`i4` / `u4`): their `@bytes` and weights bytes are read packed (two values
per byte, low nibble first, as our writer stores them) or, when the length says so, one value
per byte (the format's reference tooling), and become int4/uint4 constants.

Strict (a `WebnnFormatError` at the declaration): positional literal arguments, unknown
operators and options, `@bytes` of the wrong length, `i4`/`u4` graph inputs (WebNN graphs
take no 4-bit inputs), forward references, duplicate names, weights entries whose dtype, shape
or length disagree with the declaration. Safety on hostile input: every tensor byte length is
checked against the spec maximum (and for `@weights` against the weights file) before anything
is allocated or read, and `@scalar` expansion is bounded by `max_scalar_bytes` in total.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Protocol, TypeGuard

import numpy as np

from converter.core.webnn import MLContext, MLGraph, MLGraphBuilder, MLOperand
from converter.core.webnn.dtypes import (
    FOUR_BIT_TYPES,
    MAX_DIMENSION,
    MAX_RANK,
    MAX_TENSOR_BYTE_LENGTH,
    byte_length,
    cast_number,
    numpy_dtype,
    pack_4bit,
    unpack_4bit,
)
from converter.core.webnn.operators import OPERATORS
from converter.io.serialize.errors import WebnnFormatError, WeightsMismatch
from converter.io.serialize.source_types import with_source_types
from converter.io.serialize.syntax import Arg, ConstDecl, GraphText, NodeDecl, Ref, TypeSpec
from converter.io.serialize.tables import (
    DTYPE_VALUE_KEYS,
    LEGACY_OPTIONS,
    LONG_DTYPES,
    OPERAND_KEYS_ANY,
    UNSUPPORTED_DTYPES,
)
from converter.io.serialize.weights import Manifest, WeightsBlob


class TensorSource(Protocol):
    """Weights other than a WGWT blob + manifest (e.g. a `.safetensors` archive)."""

    path: str
    names: tuple[Mapping[str, str], Mapping[str, str]] | None

    def get(self, key: str, data_type: str, shape: tuple[int, ...]) -> np.ndarray:
        """The tensor under `key` (declared `data_type`/`shape`); raises WeightsMismatch."""
        ...


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _numel(doc: GraphText, ty: TypeSpec, pos: int, what: str) -> int:
    if len(ty.dims) > MAX_RANK:
        raise doc.error(f"{what}: rank {len(ty.dims)} exceeds {MAX_RANK}", pos)
    count = 1
    for d in ty.dims:
        if d.size > MAX_DIMENSION:
            raise doc.error(f"{what}: dimension {d.size} exceeds {MAX_DIMENSION}", pos)
        count *= d.size
    if byte_length(ty.data_type, count) > MAX_TENSOR_BYTE_LENGTH:
        raise doc.error(f"{what}: {count} elements exceed the maximum tensor byte length", pos)
    return count


def _check_dtype(doc: GraphText, ty: TypeSpec, pos: int, what: str) -> None:
    """Graph inputs: the 4-bit types are constants-only."""
    if ty.data_type in UNSUPPORTED_DTYPES:
        raise doc.error(f"{what}: data type {ty.data_type} is not supported for graph inputs "
                        "(4-bit values can only be constants)", pos)


def _decode(raw: bytes, data_type: str, shape: tuple[int, ...], count: int) -> np.ndarray:
    """Stored constant bytes as the array `MLGraphBuilder.constant` takes: 4-bit types
    packed (or, with `count` bytes, one value per byte, low nibble read), others
    little-endian."""
    if data_type in FOUR_BIT_TYPES:
        if len(raw) == byte_length(data_type, count):
            return unpack_4bit(raw, data_type, shape)
        one = np.frombuffer(raw, np.uint8)  # one value per byte: keep the low nibble
        return unpack_4bit(pack_4bit(one), data_type, shape)
    dtype = np.dtype(data_type)
    return np.frombuffer(raw, dtype.newbyteorder("<")).astype(dtype).reshape(shape)


class GraphBuilder:
    """Replays a `GraphText` through a fresh `MLGraphBuilder` of `context` (`run()` returns the
    built graph). Weights come from `tensors` when given, else from `weights` + `manifest`;
    original input/output names from `names`, else from the manifest."""

    def __init__(self, doc: GraphText, manifest: Manifest | None, weights: WeightsBlob | None,
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
        """Bind `name` (declared once only) to `operand`."""
        if name in self.values:
            raise self.doc.error(f"{name!r} is already declared (as a {self.kinds[name]})", pos)
        self.values[name] = operand
        self.kinds[name] = kind

    def run(self) -> MLGraph:
        """Declare inputs, constants and nodes in order; build the graph of the outputs."""
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
        graph: MLGraph = self._call(doc.outputs[0][1], "build", self.builder.build, outputs)
        source = self.tensors if self.tensors is not None else self.manifest
        return with_source_types(graph, getattr(source, "source_types", None),
                                 (in_names, out_names),
                                 source.path if source is not None else doc.source.path)

    def _call(self, pos: int, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (TypeError, ValueError, OverflowError, IndexError, KeyError) as e:
            raise self.doc.error(f"{what}: {e}", pos) from e

    def _constant(self, c: ConstDecl) -> MLOperand:
        doc = self.doc
        what = f"constant {c.name!r}"
        count = _numel(doc, c.type, c.pos, what)
        data_type = c.type.data_type
        dtype = numpy_dtype(data_type)
        shape = tuple(d.size for d in c.type.dims)
        nbytes = byte_length(data_type, count)
        # lengths accepted for stored bytes: 4-bit types packed or one value per byte
        lengths = {nbytes, count} if data_type in FOUR_BIT_TYPES else {nbytes}
        if c.kind == "scalar":
            if nbytes > self.scalar_budget:
                raise doc.error(f"{what}: @scalar expands to {nbytes} bytes, more than the "
                                "remaining max_scalar_bytes budget", c.pos)
            self.scalar_budget -= nbytes
            # As the reference importer: through float32, then cast to the data type.
            try:
                f = float(c.value)
            except OverflowError:  # an integer beyond float64 (copysign would convert it)
                f = math.inf if c.value > 0 else -math.inf
            with np.errstate(over="ignore"):
                f = float(np.float32(f))
            arr = np.full(shape, cast_number(f, data_type), dtype=dtype)
        elif c.kind == "bytes":
            if len(c.value) not in lengths:
                raise doc.error(f"{what}: @bytes has {len(c.value)} bytes, {data_type}"
                                f"{list(shape)} needs {nbytes}", c.pos)
            arr = _decode(bytes(c.value), data_type, shape, count)
        else:
            arr = self._weights(c, what, shape, count, lengths)
        operand: MLOperand = self._call(c.pos, what, self.builder.constant, arr, data_type)
        return operand

    def _weights(self, c: ConstDecl, what: str, shape: tuple[int, ...], count: int,
                 lengths: set[int]) -> np.ndarray:
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
        if entry.length not in lengths:
            raise doc.error(f"{what}: the manifest byteLength {entry.length} differs from "
                            f"{min(lengths)} ({c.type.data_type}{list(shape)})", c.pos)
        raw = self.weights.read(entry.offset, entry.length, f"tensor {entry.key!r}")
        return _decode(raw, c.type.data_type, shape, count)

    def _node(self, node: NodeDecl) -> None:
        doc = self.doc
        self._pos = node.pos
        if node.op is None:
            ref = node.args[0].value
            operand = self._operand(ref.name, ref.pos, "identity")
            results = self._call(node.pos, "identity", self.builder.apply, "identity",
                                 [operand], {})
            op = "identity"
        else:
            op = node.op
            sig = OPERATORS.get(op)
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
            options: dict[str, Any] = {}
            for key, arg in named.items():
                if key not in sig.options and key in LEGACY_OPTIONS:
                    if LEGACY_OPTIONS[key] in named:
                        raise doc.error(f"{op}: both {key!r} and {LEGACY_OPTIONS[key]!r} given",
                                        arg.pos)
                    key = LEGACY_OPTIONS[key]
                option = sig.options.get(key)
                if option is None:
                    raise doc.error(f"{op}: unknown option {key!r}", arg.pos)
                if arg.value is None:
                    continue
                options[key] = self._convert(op, key, arg.value, option.operand)
            results = self._call(node.pos, op, self.builder.apply, op, call_args, options)
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
        if operand or key in OPERAND_KEYS_ANY:
            if isinstance(value, Ref):
                return self._operand(value.name, value.pos, op)
            if isinstance(value, str):
                if value not in self.values:
                    raise self.doc.error(f"{op}: option {key}: {value!r} is not declared before "
                                         "this use", self._pos)
                return self.values[value]
            return value
        return _plain(value, key in DTYPE_VALUE_KEYS)


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


__all__ = ["GraphBuilder", "TensorSource"]
