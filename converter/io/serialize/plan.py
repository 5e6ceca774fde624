"""The writers' plan of a graph: identifiers, constant storage and node layout, shared by the
`.webnn` text, the `.webnn.json` twin, the WGWT blob + manifest, `.safetensors` and the
JavaScript exporter; and the plan's renderings as `.webnn` text and as manifest.

Layout of the text (`WebnnPlan.iter_text`): header (`webnn_graph "<name>" v1 [@quantized] {`),
`inputs`, `consts`, `nodes`, `outputs`, closing `}`. Operators and options keep their spec
names; operands are positional arguments (concat's inputs one by one), required non-operand
parameters are named with their IDL names (`axis=`, `newShape=`, `dataType=`, ...), options
follow as named arguments with every default filled in. Multi-output operators (`split`,
`gru`, `lstm`, `lstmCell`) use the bracketed left side `[a, b] = ...`.

The manifest (`WebnnPlan.manifest`): `{"format": "wg-weights-manifest", "version": 1,
"endianness": "little", "tensors": {...}}` plus, when some graph input or output name is not a
valid identifier, `"names": {"inputs": {identifier: original}, "outputs": {identifier:
original}}` so the reader restores the original names exactly (other readers ignore the extra
key). `byteOffset` values are absolute (the blob's 8-byte header included). A graph lowered
for a target whose callers hold some inputs or outputs in another type than the graph's
(`MLGraph.narrowed_inputs` / `narrowed_outputs`: int64 carried as int32, rule narrow-int64;
int8 carried as int32, rule widen-io) also gets `"sourceDataTypes": {"inputs": {identifier:
type}, "outputs": {identifier: type}}` (long data type names), so that a reloaded graph
converts its feeds (with the range check) and outputs as the converted one does; the
`.safetensors` weights carry both tables in their metadata (`webnn.names`,
`webnn.sourceDataTypes`). Other readers ignore these keys and see the graph's own types.
A graph with carried state (`converter.results.state`) gets `"state": [{"input": identifier,
"output": identifier, "dataType", "shape", "initial": ...}]` (`state_table`, docs/state.md).

Constants: uniform tensors whose value is exact in float32 become `@scalar(v)`, other tensors
of at most `INLINE_BYTES` bytes `@bytes([...])`, everything else `@weights("<identifier>")`.
4-bit constants (`i4` / `u4`) are stored packed, two values per byte with the first in the low
nibble (as WebNN implementations, the WPT and ONNX pack them), in the blob and in `@bytes`;
their manifest `byteLength` is ceil(count / 2). (The format's reference tooling sizes them at
one byte per element; `graph_builder` reads both layouts.)

Restrictions: the text has no NaN and no infinity. NaN option values are rejected
(`NotRepresentable`, a `WebnnExportError`; `WebnnPlan.text_problem` names the first before
anything is written); infinite bounds of `clamp` on float inputs are dropped (no bound is the
same operation); other infinite option values (e.g. a `pad` value of -Infinity) are written
as `1e999` / `-1e999`, which is valid number syntax and reads back as infinity in Python (and
in Rust's float parser). Graph input/output names are sanitised to the identifier alphabet
(`[A-Za-z_/$][A-Za-z0-9_./]*`, no keywords, nothing starting with true/false/null) and made
unique; constants are named `const_<i>`, operator results `<op>_<i>`. A graph output that
names the same operand as an earlier output is written through an added `identity` node.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from converter.core.webnn import MLGraph, MLOperand, Operation
from converter.core.webnn.dtypes import FOUR_BIT_TYPES, pack_4bit
from converter.core.webnn.operators import OPERATORS, operator
from converter.io.serialize.errors import WebnnExportError
from converter.io.serialize.lexicon import (
    IDENT_RE,
    Namer,
    format_number,
    format_string,
    format_value,
    has_nan,
)
from converter.io.serialize.state_table import STATE_KEY, state_entries
from converter.io.serialize.tables import MANIFEST_FORMAT, SHORT_DTYPES, WEIGHTS_HEADER_BYTES
from converter.results.state import StatePair

INLINE_BYTES = 16
"""Non-uniform constants up to this many bytes are written inline with `@bytes`."""


@dataclass(frozen=True)
class ConstantEntry:
    """How one constant is stored: kind "weights" (blob slice at `offset`, `length` bytes),
    "scalar" (every element equals `scalar`) or "bytes" (inline `data`)."""

    ident: str
    operand: MLOperand = field(repr=False)
    kind: str
    scalar: float | int | None = None
    offset: int = 0
    length: int = 0


@dataclass(frozen=True)
class WebnnPlan:
    """Identifiers, constant storage and the texts of one graph, before anything is written.

    `idents` maps id(operand) to its identifier; `input_names`/`output_names` map identifiers
    to the original names; `aliases` are (identifier, source identifier) identity nodes added
    for outputs that repeat an operand.
    """

    graph: MLGraph = field(repr=False)
    name: str
    idents: Mapping[int, str] = field(repr=False)
    input_names: Mapping[str, str]
    output_names: Mapping[str, str]
    aliases: tuple[tuple[str, str], ...]
    constants: tuple[ConstantEntry, ...]
    quantized: bool
    weights_size: int
    state: tuple[StatePair, ...] = ()
    """The carried states of the graph (`converter.results.state`; the manifest's `state`
    table, `converter.io.serialize.state_table`)."""

    def ident(self, operand: MLOperand) -> str:
        """The identifier of `operand` (KeyError for an operand not in the graph)."""
        return self.idents[id(operand)]

    @property
    def blob_constants(self) -> list[ConstantEntry]:
        """The `@weights` constants, in blob order."""
        return [c for c in self.constants if c.kind == "weights"]

    def manifest(self) -> dict[str, Any]:
        """The manifest of the blob (module docstring), as a dict."""
        tensors = {}
        for c in self.blob_constants:
            desc = c.operand.descriptor
            tensors[c.ident] = {"dataType": desc.data_type, "shape": list(desc.shape),
                                "byteOffset": c.offset, "byteLength": c.length,
                                "layout": "row-major"}
        out: dict[str, Any] = {"format": MANIFEST_FORMAT, "version": 1,
                               "endianness": "little", "tensors": tensors}
        names = {}
        renamed_in = {k: v for k, v in self.input_names.items() if k != v}
        renamed_out = {k: v for k, v in self.output_names.items() if k != v}
        if renamed_in:
            names["inputs"] = renamed_in
        if renamed_out:
            names["outputs"] = renamed_out
        if names:
            out["names"] = names
        types = self.source_data_types()
        if types:
            out["sourceDataTypes"] = types
        if self.state:
            out[STATE_KEY] = state_entries(self.state, self.input_names, self.output_names)
        return out

    def source_data_types(self) -> dict[str, dict[str, str]]:
        """The caller-side types of the graph's narrowed / widened inputs and outputs by
        identifier (`{"inputs": {...}, "outputs": {...}}`, sections without any left out;
        empty when there are none): the manifest's `sourceDataTypes` (module docstring)."""
        g = self.graph
        by_output = {original: ident for ident, original in self.output_names.items()}
        tables = {"inputs": {self.ident(g.inputs[n]): t for n, t in g.narrowed_inputs.items()
                             if n in g.inputs},
                  "outputs": {by_output[n]: t for n, t in g.narrowed_outputs.items()
                              if n in by_output}}
        return {k: v for k, v in tables.items() if v}

    def manifest_json(self) -> str:
        """The manifest as JSON text, one tensor entry per line."""
        m = self.manifest()
        lines = ["{"]
        for key, value in m.items():
            if key == "tensors" and value:
                entries = [f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items()]
                text = "{\n" + ",\n".join(entries) + "\n  }"
            else:
                text = json.dumps(value)
            lines.append(f"  {json.dumps(key)}: {text},")
        lines[-1] = lines[-1][:-1]
        return "\n".join(lines) + "\n}\n"

    def text_problem(self) -> str:
        """What the `.webnn` text cannot hold ('' when nothing): the first operation with a
        NaN option value (e.g. `pad`'s value), which `iter_text` would refuse
        (`NotRepresentable`). The JavaScript export writes it as `NaN`."""
        for index, operation in enumerate(self.graph.operations):
            for key, value in self.node_parts(operation)[2]:
                if not isinstance(value, MLOperand) and has_nan(value):
                    return f"{operation.op} #{index}: option {key} is NaN"
        return ""

    def text(self) -> str:
        """The whole `.webnn` text."""
        return "".join(self.iter_text())

    def iter_text(self) -> Iterable[str]:
        """The `.webnn` text in chunks (a few lines each)."""
        g = self.graph
        quant = " @quantized" if self.quantized else ""
        yield f"webnn_graph {format_string(self.name)} v1{quant} {{\n"
        if g.inputs:
            yield "  inputs {\n"
            for operand in g.inputs.values():
                yield f"    {self.ident(operand)}: {_type(operand)};\n"
            yield "  }\n"
        if self.constants:
            yield "  consts {\n"
            for c in self.constants:
                yield f"    {c.ident}: {_type(c.operand)} {_annotation(c)};\n"
            yield "  }\n"
        yield "  nodes {\n"
        for operation in g.operations:
            yield f"    {self.node_text(operation)};\n"
        for ident, source in self.aliases:
            yield f"    {ident} = identity({source});\n"
        yield "  }\n"
        yield "  outputs {\n"
        for ident in self.output_names:
            yield f"    {ident};\n"
        yield "  }\n}\n"

    def node_text(self, operation: Operation) -> str:
        """One node statement, without the indentation and the closing `;`."""
        what = operation.op
        outs, inputs, named = self.node_parts(operation)
        args = inputs + [f"{key}={format_value(value, self.idents, f'{what}.{key}')}"
                         for key, value in named]
        lhs = f"[{', '.join(outs)}]" if operator(operation.op).returns_list else outs[0]
        return f"{lhs} = {operation.op}({', '.join(args)})"

    def node_parts(self, operation: Operation
                   ) -> tuple[list[str], list[str], list[tuple[str, Any]]]:
        """(output identifiers, operand-input identifiers, named arguments) of one node, as
        both the text and the JSON writers lay it out: operands positional (concat's one by
        one), required non-operand parameters then options named, infinite clamp bounds on
        float inputs dropped. Named values are raw (operands stay MLOperands)."""
        sig = OPERATORS.get(operation.op)
        if sig is None:
            raise WebnnExportError(f"{operation.op}: unknown operator")
        what = operation.op
        args: list[str] = []
        named: list[tuple[str, Any]] = []
        if len(operation.args) != len(sig.positional):
            raise WebnnExportError(f"{what}: {len(operation.args)} recorded arguments, the "
                                   f"builder method takes {len(sig.positional)}")
        for param, value in zip(sig.positional, operation.args, strict=True):
            if isinstance(value, MLOperand):
                args.append(self.ident(value))
            elif (isinstance(value, (list, tuple)) and value
                  and all(isinstance(v, MLOperand) for v in value)):
                args.extend(self.ident(v) for v in value)
            else:
                named.append((param.spec_name, value))
        for key, value in operation.options.items():
            if not IDENT_RE.match(key):
                raise WebnnExportError(f"{what}: option name {key!r} is not an identifier")
            if isinstance(value, MLOperand) and key not in sig.operand_options:
                raise WebnnExportError(f"{what}: option {key} holds an operand")
            if _skip_option(operation, key, value):
                continue
            named.append((key, value))
        return [self.ident(o) for o in operation.outputs], args, named


def _skip_option(operation: Operation, key: str, value: Any) -> bool:
    """Infinite clamp bounds on float inputs are no bounds: leave them out."""
    if operation.op != "clamp" or key not in ("minValue", "maxValue"):
        return False
    if not isinstance(value, (float, np.floating)) or not math.isinf(value):
        return False
    return (key == "minValue") == (value < 0)


def _type(operand: MLOperand) -> str:
    dt = SHORT_DTYPES.get(operand.data_type)
    if dt is None:  # pragma: no cover - the builder only makes WebNN types
        raise WebnnExportError(f"data type {operand.data_type} has no .webnn name")
    return f"{dt}[{', '.join(str(d) for d in operand.shape)}]"


def _annotation(c: ConstantEntry) -> str:
    if c.kind == "scalar":
        return f"@scalar({format_number(c.scalar)})"
    if c.kind == "bytes":
        data = constant_bytes(c.operand)
        return f"@bytes([{', '.join(str(b) for b in data)}])"
    return f"@weights({format_string(c.ident)})"


def constant_bytes(operand: MLOperand) -> bytes:
    """The stored bytes of a constant: little-endian row-major, 4-bit types packed two values
    per byte (low nibble first; the bytes a 4-bit constant was given packed as, unchanged)."""
    if operand.data_type in FOUR_BIT_TYPES:
        return pack_4bit(constant_value(operand)) if operand.packed is None else \
            operand.packed.tobytes()
    return le_bytes(constant_value(operand))


def constant_value(operand: MLOperand) -> np.ndarray:
    """The array of a constant operand (never None for constants)."""
    assert operand.value is not None
    return operand.value


def le_bytes(arr: np.ndarray) -> bytes:
    """The raw little-endian row-major bytes of `arr`."""
    return np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()


def _scalar_of(arr: np.ndarray) -> float | int | None:
    """The common value of a uniform tensor when `@scalar` reproduces it exactly."""
    if arr.size == 0:
        return None
    flat = arr.reshape(-1)
    bits = flat.view(f"u{flat.dtype.itemsize}")
    if not np.all(bits == bits[0]):
        return None
    first = flat[0]
    if arr.dtype.kind == "f":
        f = float(first)
        if not math.isfinite(f) or float(np.float32(f)) != f:
            return None
        return f
    i = int(first)
    return i if abs(i) <= 2**24 else None


def plan(graph: MLGraph, name: str = "graph", state: tuple[StatePair, ...] = ()
         ) -> WebnnPlan:
    """Choose identifiers and constant storage for `graph` (nothing is written); `state`
    are its carried states (kept for the manifest and the JavaScript module)."""
    if not isinstance(graph, MLGraph):
        raise TypeError(f"expected an MLGraph, got {type(graph).__name__}")
    namer = Namer()
    idents: dict[int, str] = {}
    input_names: dict[str, str] = {}
    for original, operand in graph.inputs.items():
        ident = namer.take(original)
        idents[id(operand)] = ident
        input_names[ident] = original
    output_names: dict[str, str] = {}
    aliases: list[tuple[str, str]] = []
    for original, operand in graph.outputs.items():
        ident = namer.take(original)
        output_names[ident] = original
        if id(operand) in idents:
            aliases.append((ident, idents[id(operand)]))
        else:
            idents[id(operand)] = ident
    constants: list[ConstantEntry] = []
    offset = WEIGHTS_HEADER_BYTES
    for i, operand in enumerate(graph.constants):
        ident = namer.take(f"const_{i}")
        idents[id(operand)] = ident
        arr = constant_value(operand)
        scalar = _scalar_of(arr)
        nbytes = operand.descriptor.byte_length  # packed for the 4-bit types
        if scalar is not None:
            constants.append(ConstantEntry(ident, operand, "scalar", scalar=scalar))
        elif nbytes <= INLINE_BYTES:
            constants.append(ConstantEntry(ident, operand, "bytes"))
        else:
            constants.append(ConstantEntry(ident, operand, "weights", offset=offset,
                                           length=nbytes))
            offset += nbytes
    counter = 0
    for operation in graph.operations:
        for out in operation.outputs:
            if id(out) not in idents:
                idents[id(out)] = namer.take(f"{operation.op}_{counter}")
                counter += 1
    quantized = any(op.op in ("quantizeLinear", "dequantizeLinear") for op in graph.operations)
    return WebnnPlan(graph, name, idents, input_names, output_names, tuple(aliases),
                     tuple(constants), quantized, offset, tuple(state))


__all__ = ["INLINE_BYTES", "ConstantEntry", "WebnnPlan", "constant_bytes", "constant_value",
           "le_bytes", "plan"]
