"""JavaScript export: `<stem>.js` (an ES module that rebuilds the graph with the browser's
WebNN `MLGraphBuilder`) and `<stem>.html` (a page that runs it).

`<stem>.js` exports:

- `buildGraph(context, weights)`: replays every operator with spec camelCase method and
  option names (`builder.conv2d(v0, v1, {padding: [...], bias: v2})`), declares inputs with
  `builder.input(name, {dataType, shape})` and constants with
  `builder.constant({dataType, shape}, typedArray)`, and returns `builder.build({...})`.
  `weights` is the Map returned by `loadWeights`.
- `loadWeights(url)` / `weightsFromBuffer(buffer)`: fetch the `<stem>.weights` blob (the same
  WGWT file as the `.webnn` export), check its header and slice one typed array per tensor of
  the embedded manifest (copied, so unaligned offsets are fine).
- `INPUTS`, `OUTPUTS` (arrays of `{name, dataType, shape}`), `GRAPH_NAME`, `WEIGHTS_FILE`.
- `narrowInput(desc, values)` / `widenOutput(desc, data)`: for a graph lowered for a target
  without 64-bit integers (`converter.passes.targets`, rule narrow-int64; `MLGraph.narrowed_inputs`
  / `narrowed_outputs`), whose `INPUTS` / `OUTPUTS` rows then carry `sourceDataType` ("int64"
  or "uint64") next to the graph's `dataType` ("int32" / "uint32"): `narrowInput` takes a
  `BigInt64Array` / `BigUint64Array` (or an array of bigints, numbers or decimal strings),
  checks every value fits the graph's type (a `RangeError` naming the input and the value
  otherwise) and gives the `Int32Array` / `Uint32Array` to write; `widenOutput` turns what
  `readTensor` gives back into a `BigInt64Array` / `BigUint64Array`. Other inputs and
  outputs pass through unchanged (`widenOutput` wraps a buffer in its typed array). The page
  does both.

Safety: every string that comes from the model (input/output names, labels, the graph
name, string option values) is emitted as a JSON string literal with non-ASCII, `<`, `>`, `&`
and U+2028/U+2029 escaped (`js_string`), so it can neither end a string nor close a
`<script>` element; named records use computed keys (`{["name"]: v}`) or
`Object.fromEntries`, so a name such as `__proto__` is an ordinary key. JavaScript variable
names are generated (`v0`, `v1`, ...). Operator and option names are checked against
`[A-Za-z][A-Za-z0-9]*` before they are written.

Restrictions: float16 tensors use `Float16Array` where the browser has it, else
`Uint16Array` holding the binary16 bits (what Chromium's WebNN accepts). int4/uint4 constants
are `Uint8Array`s of the packed bytes (two values per byte, low nibble first, as Chromium
takes them); they are optional WebNN data types, so such a graph builds only where
`opSupportLimits()` lists them for `constant` and `dequantizeLinear`. Integers beyond
2^53 in number-valued options (clamp bounds, pad value of int64 tensors) are written as
BigInt literals. The page needs a browser with WebNN (`navigator.ml`) and must be served over
HTTP: browsers block module scripts and `fetch()` of the weights on file:// URLs.

The page explains itself: it says how to serve the folder (`python3 -m http.server` in it,
then http://localhost:8000/<stem>.html) and why file:// fails (also as an on-page error
when it is opened from file://), lists the inputs and outputs (names, data types, shapes)
as static HTML (readable even when no script runs), and shows timings (weights load,
context creation, graph build, first compute, average compute). Text placed in the HTML
markup goes through `html_literal` (every character outside a small ASCII set becomes a
numeric character reference); text placed in the script is a `js_string` literal.

For automated checks (`webnn-convert validate --browser`, `converter.validate.browser`), the page
also exposes two promises, invisible to its users: `globalThis.__webnnReady` settles once the
module and weights are loaded (`{ok: true}`, or `{ok: false, error}`) and
`globalThis.__webnnResult` once the first run is done (`{ok: true, outputs: {name: {dataType,
shape, buffer}}, timings}`) or on the first error. A context the browser cannot create (no
such device) or a graph it cannot build gets its own message on the page.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from converter.core.webnn import MLGraph, MLOperand, Operation
from converter.core.webnn.dtypes import FOUR_BIT_TYPES
from converter.core.webnn.operators import OPERATORS, operator
from converter.io.export.html_page import html_text
from converter.io.export.literals import html_literal, js_string
from converter.io.serialize.errors import WebnnExportError
from converter.io.serialize.plan import WebnnPlan, constant_bytes, plan

_JS_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*\Z")
_SAFE_STEM_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\Z")
MAX_SAFE_INTEGER = 2**53 - 1


def js_number(value: Any) -> str:
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        v = int(value)
        return f"{v}n" if abs(v) > MAX_SAFE_INTEGER else str(v)
    f = float(value)
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    return repr(f)


def js_value(value: Any, names: dict[int, str]) -> str:
    """A JavaScript expression for an argument or option value."""
    if isinstance(value, MLOperand):
        return names[id(value)]
    if value is None:
        return "undefined"
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, str):
        return js_string(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return js_number(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(js_value(v, names) for v in value) + "]"
    raise WebnnExportError(f"cannot write a value of type {type(value).__name__} in JavaScript")


def _descriptor(operand: MLOperand) -> str:
    return (f"{{dataType: {js_string(operand.data_type)}, "
            f"shape: [{', '.join(str(d) for d in operand.shape)}]}}")


def _io_list(items: Iterable[tuple[str, MLOperand]], narrowed: dict[str, str]) -> str:
    rows = [f"  {{name: {js_string(n)}, dataType: {js_string(o.data_type)}, "
            f"shape: [{', '.join(str(d) for d in o.shape)}]"
            + (f", sourceDataType: {js_string(narrowed[n])}" if n in narrowed else "") + "}"
            for n, o in items]
    return "[\n" + ",\n".join(rows) + "\n]" if rows else "[]"


_RUNTIME = r"""
const FLOAT16 = globalThis.Float16Array ?? Uint16Array;
const TYPED_ARRAYS = new Map([
  ["float32", Float32Array], ["float16", FLOAT16], ["int32", Int32Array],
  ["uint32", Uint32Array], ["int64", BigInt64Array], ["uint64", BigUint64Array],
  ["int8", Int8Array], ["uint8", Uint8Array],
  ["int4", Uint8Array], ["uint4", Uint8Array],  // packed: two values per byte, low nibble first
]);

/** The typed array constructor WebNN expects for a data type. */
export function typedArrayFor(dataType) {
  const ctor = TYPED_ARRAYS.get(dataType);
  if (ctor === undefined) throw new TypeError(`unsupported data type ${dataType}`);
  return ctor;
}

/** Slice the WGWT weights blob (ArrayBuffer) into a Map of key -> typed array. */
export function weightsFromBuffer(buffer) {
  const bytes = new Uint8Array(buffer);
  const magic = String.fromCharCode(...bytes.subarray(0, 4));
  if (bytes.length < 8 || magic !== "WGWT") throw new Error("weights: not a WGWT file");
  const version = new DataView(buffer, 0, 8).getUint32(4, true);
  if (version !== 1) throw new Error(`weights: unsupported version ${version}`);
  const weights = new Map();
  for (const [key, dataType, offset, length] of MANIFEST) {
    if (offset < 8 || offset + length > bytes.length) {
      throw new Error(`weights: tensor ${JSON.stringify(key)} lies outside the file`);
    }
    weights.set(key, new (typedArrayFor(dataType))(buffer.slice(offset, offset + length)));
  }
  return weights;
}

/** Fetch the weights blob (default: next to this module) and slice it. */
export async function loadWeights(url = new URL(WEIGHTS_FILE, import.meta.url)) {
  if (MANIFEST.length === 0) return new Map();
  const response = await fetch(url);
  if (!response.ok) throw new Error(`weights: ${url}: HTTP ${response.status}`);
  return weightsFromBuffer(await response.arrayBuffer());
}

function tensor(weights, key) {
  const value = weights?.get(key);
  if (value === undefined) throw new Error(`buildGraph: weights has no tensor ${JSON.stringify(key)}`);
  return value;
}

function inlineBytes(dataType, bytes) {
  return new (typedArrayFor(dataType))(new Uint8Array(bytes).buffer);
}

const NARROW_RANGES = new Map([
  ["int32", [-(2n ** 31n), 2n ** 31n - 1n]], ["uint32", [0n, 2n ** 32n - 1n]],
  ["int64", [-(2n ** 63n), 2n ** 63n - 1n]], ["uint64", [0n, 2n ** 64n - 1n]],
]);

/**
 * The typed array to write for graph input `desc` (a row of INPUTS). An input the converter
 * narrowed from int64/uint64 for its target (`desc.sourceDataType`) takes a BigInt64Array /
 * BigUint64Array or an array of bigints, numbers or decimal strings; every value must fit
 * the graph's type (RangeError otherwise). An input carried in a wider integer type for its
 * target (int8 as int32, `desc.sourceDataType` "int8") takes the source type's typed array
 * and is converted the same way. Other inputs' values come back unchanged.
 */
export function narrowInput(desc, values) {
  if (!desc.sourceDataType) return values;
  const name = JSON.stringify(desc.name);
  const count = desc.shape.reduce((a, b) => a * b, 1);
  if (values.length !== count) {
    throw new RangeError(`input ${name}: ${values.length} values, expected ${count}`);
  }
  const [lo, hi] = NARROW_RANGES.get(desc.dataType);
  const out = new (typedArrayFor(desc.dataType))(count);
  for (let i = 0; i < count; i++) {
    let value;
    try {
      value = BigInt(values[i]);
    } catch {
      throw new RangeError(`input ${name}: ${String(values[i])} is not an integer`);
    }
    if (value < lo || value > hi) {
      throw new RangeError(`input ${name}: value ${value} does not fit ${desc.dataType} ` +
        `[${lo}, ${hi}]; the graph takes ${desc.dataType} there (narrowed from ` +
        `${desc.sourceDataType} for its target)`);
    }
    out[i] = desc.dataType.endsWith("64") ? value : Number(value);
  }
  return out;
}

/**
 * Graph output `desc` (a row of OUTPUTS) as its source data type: `data` is what readTensor
 * gives (an ArrayBuffer) or a typed array; an output narrowed from int64/uint64
 * (`desc.sourceDataType`) comes back as a BigInt64Array / BigUint64Array, one carried in a
 * wider type for its target (int8 as int32) as the typed array of its source type, others as
 * the typed array of their data type.
 */
export function widenOutput(desc, data) {
  const array = ArrayBuffer.isView(data) ? data : new (typedArrayFor(desc.dataType))(data);
  if (!desc.sourceDataType) return array;
  const big = desc.sourceDataType.endsWith("64");  // narrowed int64/uint64: bigints
  return typedArrayFor(desc.sourceDataType).from(array, big ? (v) => BigInt(v) : (v) => v);
}

function splat(dataType, elementBytes, count) {
  const size = elementBytes.length;
  const out = new Uint8Array(size * count);
  out.set(elementBytes, 0);
  for (let filled = size; filled < out.length; filled *= 2) {
    out.copyWithin(filled, 0, Math.min(filled, out.length - filled));
  }
  return new (typedArrayFor(dataType))(out.buffer);
}
"""


@dataclass(frozen=True)
class JavaScriptFiles:
    """The generated module and page (text)."""

    module: str
    html: str


def _manifest_rows(p: WebnnPlan) -> str:
    rows = [f"  [{js_string(c.ident)}, {js_string(c.operand.data_type)}, {c.offset}, "
            f"{c.length}]" for c in p.blob_constants]
    return "[\n" + ",\n".join(rows) + "\n]" if rows else "[]"


def _constant_expr(p: WebnnPlan, index: int) -> str:
    c = p.constants[index]
    dt = js_string(c.operand.data_type)
    if c.kind == "weights":
        data = f"tensor(weights, {js_string(c.ident)})"
    elif c.kind == "scalar" and c.operand.data_type in FOUR_BIT_TYPES:
        # packed: the same value in both nibbles, one byte per pair of elements
        nibble = int(c.scalar or 0) & 0x0F
        data = f"splat({dt}, [{nibble | nibble << 4}], {c.operand.descriptor.byte_length})"
    elif c.kind == "scalar":
        element = np.array(c.scalar, dtype=c.operand.data_type).astype(
            np.dtype(c.operand.data_type).newbyteorder("<")).tobytes()
        data = f"splat({dt}, [{', '.join(str(b) for b in element)}], {c.operand.descriptor.size})"
    else:
        raw = constant_bytes(c.operand)  # 4-bit constants packed
        data = f"inlineBytes({dt}, [{', '.join(str(b) for b in raw)}])"
    return f"builder.constant({_descriptor(c.operand)}, {data})"


def _call(operation: Operation, names: dict[int, str]) -> str:
    op = operation.op
    sig = OPERATORS.get(op)
    if sig is None or not _JS_NAME_RE.match(op):
        raise WebnnExportError(f"{op!r}: unknown operator")
    args = []
    for value in operation.args:
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, MLOperand)
                                                            for v in value):
            args.append("[" + ", ".join(names[id(v)] for v in value) + "]")
        else:
            args.append(js_value(value, names))
    options = []
    for key, value in operation.options.items():
        if value is None:
            continue
        if not _JS_NAME_RE.match(key):
            raise WebnnExportError(f"{op}: option name {key!r} is not a plain word")
        options.append(f"{key}: {js_value(value, names)}")
    if options:
        args.append("{" + ", ".join(options) + "}")
    return f"builder.{op}({', '.join(args)})"


def module_text(p: WebnnPlan, weights_file: str) -> str:
    """The ES module source for the plan's graph."""
    g = p.graph
    names: dict[int, str] = {}
    counter = 0

    def fresh(operand: MLOperand) -> str:
        nonlocal counter
        names[id(operand)] = f"v{counter}"
        counter += 1
        return names[id(operand)]

    body: list[str] = ["  const builder = new MLGraphBuilder(context);"]
    for original, operand in g.inputs.items():
        body.append(f"  const {fresh(operand)} = builder.input({js_string(original)}, "
                    f"{_descriptor(operand)});")
    for i, c in enumerate(p.constants):
        body.append(f"  const {fresh(c.operand)} = {_constant_expr(p, i)};")
    for operation in g.operations:
        call = _call(operation, names)
        if operator(operation.op).returns_list:
            outs = [fresh(o) for o in operation.outputs]
            body.append(f"  const [{', '.join(outs)}] = {call};")
        else:
            body.append(f"  const {fresh(operation.outputs[0])} = {call};")
    record = ", ".join(f"[{js_string(n)}]: {names[id(o)]}" for n, o in g.outputs.items())
    body.append(f"  return await builder.build({{{record}}});")
    head = [
        "// Generated by webnn-converter: an ES module that rebuilds the graph with WebNN.",
        "// buildGraph(context, weights) -> MLGraph; loadWeights(url) -> Map of typed arrays.",
        "",
        f"export const GRAPH_NAME = {js_string(p.name)};",
        f"export const WEIGHTS_FILE = {js_string(weights_file)};",
        f"export const INPUTS = {_io_list(g.inputs.items(), g.narrowed_inputs)};",
        f"export const OUTPUTS = {_io_list(g.outputs.items(), g.narrowed_outputs)};",
        "// [key, dataType, byteOffset, byteLength] of each tensor in the weights file.",
        f"const MANIFEST = {_manifest_rows(p)};",
        _RUNTIME,
        "/** Build the graph on `context`; `weights` is the Map from loadWeights(). */",
        "export async function buildGraph(context, weights) {",
    ]
    return "\n".join(head + body + ["}", ""])


def check_stem(stem: str) -> str:
    """File stems must be plain file names (letters, digits, `_`, `.`, `-`)."""
    if not isinstance(stem, str) or not _SAFE_STEM_RE.match(stem) or stem in (".", ".."):
        raise ValueError(f"stem {stem!r} must be a plain file name "
                         "([A-Za-z0-9_][A-Za-z0-9_.-]*)")
    return stem


def to_javascript(graph: MLGraph, stem: str = "model", name: str | None = None,
                  plan_: WebnnPlan | None = None) -> JavaScriptFiles:
    """Generate `<stem>.js` and `<stem>.html` for `graph` (in memory). The module reads
    `<stem>.weights`, written by `converter.io.serialize.weights.write_weights` from the
    same plan."""
    check_stem(stem)
    p = plan_ or plan(graph, name or stem)
    rows = {kind: [(n, o.data_type + (f" (given as {narrowed[n]}, range-checked)"
                                      if kind == "inputs" and n in narrowed else
                                      f" (returned as {narrowed[n]})" if n in narrowed else ""),
                    tuple(o.shape)) for n, o in items.items()]
            for kind, items, narrowed in (("inputs", graph.inputs, graph.narrowed_inputs),
                                          ("outputs", graph.outputs, graph.narrowed_outputs))}
    return JavaScriptFiles(module_text(p, f"{stem}.weights"),
                           html_text(f"{stem}.js", f"{stem}.weights", page_file=f"{stem}.html",
                                     name=p.name, **rows))


def write_javascript(graph: MLGraph, outdir: str | Path, stem: str = "model",
                     name: str | None = None, plan_: WebnnPlan | None = None) -> list[Path]:
    """Write `<stem>.js` and `<stem>.html` into `outdir` (the weights file is not written
    here; `converter.io.export.exporter.export(format="js")` writes everything)."""
    files = to_javascript(graph, stem, name, plan_)
    outdir = Path(outdir)
    js_path, html_path = outdir / f"{stem}.js", outdir / f"{stem}.html"
    js_path.write_text(files.module, encoding="utf-8")
    html_path.write_text(files.html, encoding="utf-8")
    return [js_path, html_path]


__all__ = ["JavaScriptFiles", "check_stem", "html_literal", "html_text", "js_string", "js_value",
           "module_text", "to_javascript", "write_javascript"]
