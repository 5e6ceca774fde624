"""Writer for the webnn-graph format: `<stem>.webnn` text, `<stem>.weights` blob and
`<stem>.manifest.json` (see ../shared/docs/webnn-graph-format.md).

Layout of what is written:

- `.webnn`: header (`webnn_graph "<name>" v1 [@quantized] {`), `inputs`, `consts`, `nodes`,
  `outputs`, closing `}`. Operators and options keep their spec names; operands are
  positional arguments (concat's inputs one by one), required non-operand parameters are
  named with their IDL names (`axis=`, `newShape=`, `dataType=`, ...), options follow as
  named arguments with every default filled in. Multi-output operators (`split`, `gru`,
  `lstm`, `lstmCell`) use the bracketed left side `[a, b] = ...`.
- `.weights`: `WGWT`, uint32 version 1, then the tensors back to back (no padding), raw
  little-endian row-major bytes; the manifest's `byteOffset` values are absolute.
- `.manifest.json`: `{"format": "wg-weights-manifest", "version": 1, "endianness": "little",
  "tensors": {...}}` plus, when some graph input or output name is not a valid identifier,
  `"names": {"inputs": {identifier: original}, "outputs": {identifier: original}}` so the
  reader restores the original names exactly (other readers ignore the extra key).

Constants: uniform tensors whose value is exact in float32 become `@scalar(v)`, other tensors
of at most `INLINE_BYTES` bytes `@bytes([...])`, everything else `@weights("<identifier>")`.

Restrictions: the text has no NaN and no infinity. NaN option values are rejected
(`WebnnExportError`); infinite bounds of `clamp` on float inputs are dropped (no bound is the
same operation); other infinite option values (e.g. a `pad` value of -Infinity) are written
as `1e999` / `-1e999`, which is valid number syntax and reads back as infinity in Python (and
in Rust's float parser). Graph input/output names are sanitised to the identifier alphabet
(`[A-Za-z_/$][A-Za-z0-9_./]*`, no keywords, nothing starting with true/false/null) and made
unique; constants are named `const_<i>`, operator results `<op>_<i>`. A graph output that
names the same operand as an earlier output is written through an added `identity` node.
"""

from __future__ import annotations

import functools
import inspect
import io
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from converter.webnn import MLGraph, MLGraphBuilder, MLOperand, Operation

WEIGHTS_MAGIC = b"WGWT"
WEIGHTS_VERSION = 1
WEIGHTS_HEADER_BYTES = 8
MANIFEST_FORMAT = "wg-weights-manifest"
# Non-uniform constants up to this many bytes are written inline with @bytes.
INLINE_BYTES = 16

SHORT_DTYPES: dict[str, str] = {
    "float32": "f32", "float16": "f16", "int32": "i32", "uint32": "u32", "int64": "i64",
    "uint64": "u64", "int8": "i8", "uint8": "u8", "int4": "i4", "uint4": "u4",
}
LONG_DTYPES: dict[str, str] = {short: long for long, short in SHORT_DTYPES.items()}
KEYWORDS = frozenset({"webnn_graph", "inputs", "consts", "nodes", "outputs", "true", "false",
                      "null", "dyn", "v", *SHORT_DTYPES.values()})
MULTI_OUTPUT_OPS = frozenset({"split", "gru", "lstm", "lstmCell"})

_IDENT_RE = re.compile(r"[A-Za-z_/$][A-Za-z0-9_./]*\Z")
_BAD_IDENT_CHAR = re.compile(r"[^A-Za-z0-9_./]")
_JS_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*\Z")


class WebnnExportError(ValueError):
    """The graph cannot be written in the webnn-graph text format."""


# -- operator signatures (shared with the reader and the JavaScript exporter) -------------
@dataclass(frozen=True)
class Param:
    """One builder parameter: spec (camelCase) name, Python name, operand-valued or not."""

    spec_name: str
    py_name: str
    operand: bool


@dataclass(frozen=True)
class OpSignature:
    """How a spec operator maps to its MLGraphBuilder method.

    `positional` are the spec's positional parameters after which `Operation.args` are
    recorded (operands, concat's operand list, or required literals such as `axis`);
    `options` maps each spec option name (camelCase) to its keyword parameter.
    """

    op: str
    method: str
    positional: tuple[Param, ...]
    options: Mapping[str, Param]

    @property
    def operand_options(self) -> frozenset[str]:
        return frozenset(name for name, p in self.options.items() if p.operand)


def camel(name: str) -> str:
    """`recurrent_weight` -> `recurrentWeight`."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@functools.cache
def _methods() -> dict[str, str]:
    out: dict[str, str] = {}
    for name, _ in inspect.getmembers(MLGraphBuilder, inspect.isfunction):
        if name.startswith("_") or name in ("input", "constant", "build"):
            continue
        out[name.replace("_", "").lower()] = name
    return out


@functools.cache
def op_signature(op: str) -> OpSignature | None:
    """The builder method of spec operator `op` and its parameters, or None if unknown."""
    if not isinstance(op, str) or not _JS_NAME_RE.match(op):
        return None
    method = _methods().get(op.lower())
    if method is None:
        return None
    params = list(inspect.signature(getattr(MLGraphBuilder, method)).parameters.values())[1:]
    positional, options = [], {}
    for p in params:
        operand = "MLOperand" in str(p.annotation)
        param = Param(camel(p.name), p.name, operand)
        if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
            positional.append(param)
        elif p.kind is inspect.Parameter.KEYWORD_ONLY:
            options[param.spec_name] = param
    return OpSignature(op, method, tuple(positional), options)


def known_ops() -> list[str]:
    """Builder method names of every operator (snake_case)."""
    return sorted(_methods().values())


# -- lexical helpers ------------------------------------------------------------------------
def is_identifier(name: str) -> bool:
    """True when `name` can be written as-is: identifier alphabet, not a keyword, not
    starting with true/false/null (the reference parser tries literals first)."""
    return (bool(_IDENT_RE.match(name)) and name not in KEYWORDS
            and not name.startswith(("true", "false", "null")))


def sanitize_identifier(name: str) -> str:
    """Map `name` into the identifier alphabet (uniqueness is the caller's business)."""
    if is_identifier(name):
        return name
    ident = name[:1] if name[:1] == "$" else ""
    ident += _BAD_IDENT_CHAR.sub("_", name[len(ident):])
    if not ident or not re.match(r"[A-Za-z_/$]", ident[0]):
        ident = "_" + ident
    if not is_identifier(ident):
        ident = "_" + ident
    return ident


def format_string(text: str) -> str:
    """A string literal: only `"` and `\\` are escaped; everything else is literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def format_number(value: Any, what: str = "value") -> str:
    """Integers as digits, floats in shortest round-trip form; infinities as +-1e999."""
    if isinstance(value, (bool, np.bool_)):
        raise WebnnExportError(f"{what}: a boolean is not a number")
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    f = float(value)
    if math.isnan(f):
        raise WebnnExportError(f"{what}: NaN cannot be written in the .webnn text format")
    if math.isinf(f):
        return "1e999" if f > 0 else "-1e999"
    text = repr(f)
    if "." not in text and "e" not in text:  # pragma: no cover - repr always has one
        text += ".0"
    return text


def format_value(value: Any, idents: Mapping[int, str], what: str) -> str:
    """An argument value: literal, array, or the identifier of an operand."""
    if isinstance(value, MLOperand):
        return idents[id(value)]
    if value is None:
        return "null"
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, str):
        return format_string(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return format_number(value, what)
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ", ".join(format_value(v, idents, what) for v in value) + "]"
    raise WebnnExportError(f"{what}: cannot write a value of type {type(value).__name__}")


class Namer:
    """Hands out unique identifiers."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def take(self, wanted: str) -> str:
        base = wanted if is_identifier(wanted) else sanitize_identifier(wanted)
        ident, n = base, 0
        while ident in self.used:
            n += 1
            ident = f"{base}_{n}"
        self.used.add(ident)
        return ident


# -- the plan -----------------------------------------------------------------------------
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

    def ident(self, operand: MLOperand) -> str:
        return self.idents[id(operand)]

    @property
    def blob_constants(self) -> list[ConstantEntry]:
        return [c for c in self.constants if c.kind == "weights"]

    def manifest(self) -> dict[str, Any]:
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
        return out

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

    def text(self) -> str:
        return "".join(self.iter_text())

    def iter_text(self) -> Iterable[str]:
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
        what = operation.op
        outs, inputs, named = self.node_parts(operation)
        args = inputs + [f"{key}={format_value(value, self.idents, f'{what}.{key}')}"
                         for key, value in named]
        lhs = f"[{', '.join(outs)}]" if operation.op in MULTI_OUTPUT_OPS else outs[0]
        return f"{lhs} = {operation.op}({', '.join(args)})"

    def node_parts(self, operation: Operation
                   ) -> tuple[list[str], list[str], list[tuple[str, Any]]]:
        """(output identifiers, operand-input identifiers, named arguments) of one node, as
        both the text and the JSON writers lay it out: operands positional (concat's one by
        one), required non-operand parameters then options named, infinite clamp bounds on
        float inputs dropped. Named values are raw (operands stay MLOperands)."""
        sig = op_signature(operation.op)
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
            if not _IDENT_RE.match(key):
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
        data = _le_bytes(_value(c.operand))
        return f"@bytes([{', '.join(str(b) for b in data)}])"
    return f"@weights({format_string(c.ident)})"


def _value(operand: MLOperand) -> np.ndarray:
    assert operand.value is not None
    return operand.value


def _le_bytes(arr: np.ndarray) -> bytes:
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


def plan(graph: MLGraph, name: str = "graph") -> WebnnPlan:
    """Choose identifiers and constant storage for `graph` (nothing is written)."""
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
        arr = _value(operand)
        scalar = _scalar_of(arr)
        if scalar is not None:
            constants.append(ConstantEntry(ident, operand, "scalar", scalar=scalar))
        elif arr.nbytes <= INLINE_BYTES:
            constants.append(ConstantEntry(ident, operand, "bytes"))
        else:
            constants.append(ConstantEntry(ident, operand, "weights", offset=offset,
                                           length=arr.nbytes))
            offset += arr.nbytes
    counter = 0
    for operation in graph.operations:
        for out in operation.outputs:
            if id(out) not in idents:
                idents[id(out)] = namer.take(f"{operation.op}_{counter}")
                counter += 1
    quantized = any(op.op in ("quantizeLinear", "dequantizeLinear") for op in graph.operations)
    return WebnnPlan(graph, name, idents, input_names, output_names, tuple(aliases),
                     tuple(constants), quantized, offset)


def write_weights(plan_: WebnnPlan, stream: IO[bytes]) -> int:
    """Write the WGWT blob of `plan_` to `stream`; returns the number of bytes written."""
    stream.write(WEIGHTS_MAGIC + WEIGHTS_VERSION.to_bytes(4, "little"))
    written = WEIGHTS_HEADER_BYTES
    for c in plan_.blob_constants:
        if written != c.offset:  # pragma: no cover - the plan is contiguous
            raise AssertionError("weights plan is not contiguous")
        data = _le_bytes(_value(c.operand))
        stream.write(data)
        written += len(data)
    return written


@dataclass(frozen=True)
class WebnnFiles:
    """The three files of a graph, in memory: text, weights blob and manifest (JSON text)."""

    text: str
    weights: bytes
    manifest: str


def to_webnn(graph: MLGraph, name: str = "graph") -> WebnnFiles:
    """Serialise `graph` in memory (see `write_webnn` to write files)."""
    p = plan(graph, name)
    buf = io.BytesIO()
    write_weights(p, buf)
    return WebnnFiles(p.text(), buf.getvalue(), p.manifest_json())


def write_webnn(graph: MLGraph, outdir: str | Path, stem: str = "model",
                name: str | None = None, plan_: WebnnPlan | None = None) -> list[Path]:
    """Write `<stem>.webnn`, `<stem>.weights` and `<stem>.manifest.json` into `outdir`
    (which must exist); returns the paths. Files are written directly: use
    `converter.export.api.export` for all-or-nothing output."""
    outdir = Path(outdir)
    p = plan_ or plan(graph, name or stem)
    text_path = outdir / f"{stem}.webnn"
    weights_path = outdir / f"{stem}.weights"
    manifest_path = outdir / f"{stem}.manifest.json"
    with open(text_path, "w", encoding="utf-8", newline="\n") as f:
        for chunk in p.iter_text():
            f.write(chunk)
    with open(weights_path, "wb") as fb:
        write_weights(p, fb)
    manifest_path.write_text(p.manifest_json(), encoding="utf-8")
    return [text_path, weights_path, manifest_path]


__all__ = ["INLINE_BYTES", "KEYWORDS", "LONG_DTYPES", "MANIFEST_FORMAT", "SHORT_DTYPES",
           "WEIGHTS_HEADER_BYTES", "WEIGHTS_MAGIC", "WEIGHTS_VERSION", "ConstantEntry",
           "Namer", "OpSignature", "Param", "WebnnExportError", "WebnnFiles", "WebnnPlan",
           "camel", "format_number", "format_string", "format_value", "is_identifier",
           "known_ops", "op_signature", "plan", "sanitize_identifier", "to_webnn",
           "write_webnn", "write_weights"]
