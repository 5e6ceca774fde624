"""JavaScript export: `<stem>.js` (an ES module that rebuilds the graph with the browser's
WebNN `MLGraphBuilder`) and `<stem>.html` (a page that runs it).

`<stem>.js` reads like the WebNN code a web developer writes (webnn-samples style) and
exports:

- `createModel(context, weights = loadWeights())` -> `{compute(feeds), inputs, outputs,
  destroy()}`: builds the graph while the weights download (with none given) and creates one
  writable MLTensor per input and one readable MLTensor per output meanwhile, once;
  `compute({name: typedArray})` writes the inputs, dispatches and resolves to `{name:
  typedArray}`, reusing those tensors on every call; `destroy()` releases the graph and the
  tensors. `inputs` / `outputs` are `INPUTS` / `OUTPUTS`. Given weights (the bytes
  `await loadWeights()` gives, a Uint8Array) are used as they are, without a fetch.
- `buildGraph(context, weights)`: replays every operator with spec camelCase method and
  option names (`builder.conv2d(image, const_0, {padding: [1, 1, 1, 1], bias: const_1})`);
  options equal to the builder's defaults are left out (`converter.io.export.js_options`:
  derived from the builder's method signatures and a replay, not from a list); values are
  named after the `.webnn` file's identifiers (`conv2d_0`), made valid and unique
  JavaScript identifiers; inputs are `builder.input(name, {dataType, shape})`, constants
  `builder.constant({dataType, shape}, data)` where `data` is a view into the weights bytes
  (`await weights.subarray(begin, end)`: no per-tensor copy; with `loadWeights()`'s promise
  it resolves once those bytes have arrived, so each constant is created while the rest
  downloads), `new Float32Array(n).fill(v)` for a uniform tensor, or a small literal array.
- `loadWeights(url)`: fetches the `<stem>.weights` blob (the same WGWT file as the `.webnn`
  export) into one preallocated buffer of its known size, chunk by chunk as they arrive
  (`response.body`; a Response without one is read whole); a promise of those bytes (a
  Uint8Array) that rejects, one line naming the URL, the HTTP status and the byte count,
  on an HTTP error or a file of another size; its `subarray(begin, end)` resolves to a view
  of bytes the moment they are there. A graph without blob constants gets a
  `loadWeights()` giving null.
- `INPUTS`, `OUTPUTS` (arrays of `{name, dataType, shape}`), `GRAPH_NAME`, `WEIGHTS_FILE`.
- Only for a graph lowered for a target without 64-bit integers (`converter.passes.targets`,
  rule narrow-int64 / widen-io; `MLGraph.narrowed_inputs` / `narrowed_outputs`), whose
  `INPUTS` / `OUTPUTS` rows then carry `sourceDataType` ("int64", "uint64", "int8") next to
  the graph's `dataType`: `narrowInput(desc, values)` takes a `BigInt64Array` /
  `BigUint64Array` (or an array of bigints, numbers or decimal strings), checks every value
  fits the graph's type (a `RangeError` naming the input and the value otherwise) and gives
  the typed array to write; `widenOutput(desc, data)` gives the output back in its source
  type. `compute()` applies both.
- Only for a model with host steps (a data-dependent tail run after the graph;
  `converter.io.export.host_js`, docs/host-steps-js.md): the steps' JavaScript and
  `runHostSteps`, `GRAPH_OUTPUTS` (what the graph computes), `OUTPUTS` as the model's outputs
  (`shape: null` where the host steps give them), `INPUTS` rows `hostOnly: true` for inputs
  only the steps read, and a createModel whose `compute()` runs graph then steps and whose
  `computeTensors()` gives `{dataType, shape, data}` (`host_js_module`). Without host steps
  the module is what it was.

Safety: every string that comes from the model (input/output names, labels, the graph
name, string option values) is emitted as a JSON string literal with non-ASCII, `<`, `>`, `&`
and U+2028/U+2029 escaped (`js_string`), so it can neither end a string nor close a
`<script>` element; output records use shorthand keys only where the key is the plain
identifier itself, else computed keys (`{["name"]: v}`), so a name such as `__proto__` is an
ordinary key. JavaScript variable names are ASCII identifiers (`js_options.js_identifiers`:
reserved words and the globals the module uses are avoided). Operator and option names are
checked against `[A-Za-z][A-Za-z0-9]*` before they are written.

Restrictions: float16 outputs are `Float16Array`s where the browser has it, else
`Uint16Array`s holding the binary16 bits; float16 constants are given as bytes (Chromium
warns that a `Uint16Array` for a float16 operand is deprecated).
Constant data is given to `builder.constant` as any view of the right byte length (the
spec's `AllowSharedBufferSource`), which Chromium accepts. int4/uint4 constants
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
shape, buffer}}, timings}`, outputs in their source data type) or on the first error. A context the browser cannot create (no
such device) or a graph it cannot build gets its own message on the page.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from converter.core.ir import ValueInfo
from converter.core.webnn import MLGraph, MLOperand, Operation
from converter.core.webnn.dtypes import FOUR_BIT_TYPES
from converter.core.webnn.operators import OPERATORS, operator
from converter.io.export.host_js import host_constant_bytes, host_steps_js
from converter.io.export.host_js_module import (
    HOST_CREATE_MODEL,
    HOST_EMBED_LIMIT,
    STATE_UPDATE,
    host_input_rows,
    host_only_inputs,
    host_output_rows,
    model_outputs,
)
from converter.io.export.html_page import html_text
from converter.io.export.js_module_templates import (
    CHECK,
    CREATE_MODEL,
    LOAD_WEIGHTS,
    NARROW_INPUT,
    NO_WEIGHTS,
    STATE_CHECK,
    STATE_DOC,
    STATE_RETURN,
    STATE_SETUP,
    WIDEN_OUTPUT,
)
from converter.io.export.js_options import JS_RESERVED, js_identifiers, written_options
from converter.io.export.literals import html_literal, js_number, js_string
from converter.io.serialize.errors import WebnnExportError
from converter.io.serialize.plan import ConstantEntry, WebnnPlan, constant_bytes, plan
from converter.results.host_steps import HostSteps

HostArgument = HostSteps | Mapping[str, Any] | None
"""Host steps for the writers: the record, its JSON form (`HostSteps.to_json()`) or None."""

_JS_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*\Z")
_PLAIN_NAME_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")
_SAFE_STEM_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\Z")
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


def _io_rows(items: Iterable[tuple[str, MLOperand]], narrowed: dict[str, str]) -> list[str]:
    return [f"{{name: {js_string(n)}, dataType: {js_string(o.data_type)}, "
            f"shape: [{', '.join(str(d) for d in o.shape)}]"
            + (f", sourceDataType: {js_string(narrowed[n])}" if n in narrowed else "") + "}"
            for n, o in items]


def _io_list(items: Iterable[tuple[str, MLOperand]], narrowed: dict[str, str]) -> str:
    return _array(_io_rows(items, narrowed))


def _array(rows: list[str]) -> str:
    one_line = "[" + ", ".join(rows) + "]"
    return one_line if len(one_line) < 80 else "[\n  " + ",\n  ".join(rows) + ",\n]"


_ARRAY_NAMES = {"float32": "Float32Array", "float16": "globalThis.Float16Array ?? Uint16Array",
                "int32": "Int32Array", "uint32": "Uint32Array", "int64": "BigInt64Array",
                "uint64": "BigUint64Array", "int8": "Int8Array", "uint8": "Uint8Array",
                "int4": "Uint8Array", "uint4": "Uint8Array"}
"""The typed array of each data type (4-bit types: packed bytes, float16: the bits where the
browser has no Float16Array)."""

def _state_rows(p: WebnnPlan) -> str:
    """`export const STATE = [...]` for a graph with carried state: input and output names
    (JSON string literals) and a function giving a fresh initial value."""
    rows = []
    for pair in p.state:
        arr = np.ascontiguousarray(pair.initial)
        if arr.dtype.name not in _ARRAY_NAMES or arr.dtype.name in FOUR_BIT_TYPES:
            raise WebnnExportError(f"state {pair.input!r}: {arr.dtype.name} state cannot be "
                                   "carried in JavaScript")
        flat = arr.reshape(-1)
        kind = _ARRAY_NAMES[arr.dtype.name].split()[-1]
        big = arr.dtype.name.endswith("64")
        if arr.dtype.name == "float16":  # the binary16 bits (writeTensor takes any view)
            values = [str(int(v)) for v in flat.view(np.uint16).tolist()]
            initial = (f"new Uint16Array({flat.size}).fill({values[0]})"
                       if flat.size and len(set(values)) == 1 else
                       f"new Uint16Array([{', '.join(values)}])")
        elif flat.size and np.all(flat == flat[0]) and not np.isnan(flat[0]):
            value = f"{int(flat[0])}n" if big else js_number(flat[0].item())
            initial = f"new {kind}({flat.size}).fill({value})"
        else:
            values = [f"{int(v)}n" if big else js_number(v) for v in flat.tolist()]
            initial = f"new {kind}([{', '.join(values)}])"
        rows.append(f"  {{input: {js_string(pair.input)}, output: {js_string(pair.output)}, "
                    f"initial: () => {initial}}},")
    return "\n".join(["export const STATE = [", *rows, "];"])


@dataclass(frozen=True)
class JavaScriptFiles:
    """The generated module and page (text)."""

    module: str
    html: str


def _typed_literal(operand: MLOperand) -> str:
    """A small constant's data: a typed array of its values where that is exact (no NaN,
    whose bits a typed array may not keep), else a Uint8Array of its little-endian bytes."""
    arr = operand.value
    dt = operand.data_type
    if arr is not None and dt in ("float32", "int32", "uint32", "int8", "uint8", "int64",
                                  "uint64") and not (dt == "float32" and np.isnan(arr).any()):
        big = dt.endswith("64")
        values = [f"{int(v)}n" if big else js_number(v) for v in arr.reshape(-1).tolist()]
        return f"new {_ARRAY_NAMES[dt]}([{', '.join(values)}])"
    return f"new Uint8Array([{', '.join(str(b) for b in constant_bytes(operand))}])"


def _constant_data(c: ConstantEntry) -> str:
    desc = c.operand.descriptor
    if c.kind == "weights":
        return f"await weights.subarray({c.offset}, {c.offset + c.length})"
    if c.kind == "bytes":
        return _typed_literal(c.operand)
    if c.operand.data_type in FOUR_BIT_TYPES:  # packed: the same value in both nibbles
        nibble = int(c.scalar or 0) & 0x0F
        return f"new Uint8Array({desc.byte_length}).fill({nibble | nibble << 4})"
    if c.operand.data_type == "float16":  # the binary16 bits, given as bytes (Chromium
        bits = int(np.array(c.scalar, np.float16).view(np.uint16))  # deprecates Uint16Array)
        return f"new Uint8Array(new Uint16Array({desc.size}).fill({bits}).buffer)"
    big = c.operand.data_type.endswith("64")
    value = f"{int(c.scalar or 0)}n" if big else js_number(c.scalar)
    return f"new {_ARRAY_NAMES[c.operand.data_type]}({desc.size}).fill({value})"


def _call(operation: Operation, names: dict[int, str]) -> str:
    op = operation.op
    if OPERATORS.get(op) is None or not _JS_NAME_RE.match(op):
        raise WebnnExportError(f"{op!r}: unknown operator")
    args = []
    for value in operation.args:
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, MLOperand)
                                                            for v in value):
            args.append("[" + ", ".join(names[id(v)] for v in value) + "]")
        else:
            args.append(js_value(value, names))
    options = []
    for key, value in written_options(operation):
        if not _JS_NAME_RE.match(key):
            raise WebnnExportError(f"{op}: option name {key!r} is not a plain word")
        options.append(f"{key}: {js_value(value, names)}")
    if options:
        args.append("{" + ", ".join(options) + "}")
    return f"builder.{op}({', '.join(args)})"


def _names(p: WebnnPlan) -> dict[int, str]:
    """id(operand) -> JavaScript name: a graph input's or output's own name where that is a
    plain JavaScript identifier, else the `.webnn` identifier (inputs, constants, operator
    results in that order)."""
    g = p.graph
    own = {id(o): n for n, o in [*g.outputs.items()][::-1]}
    own.update({id(o): n for n, o in g.inputs.items()})
    order = [*g.inputs.values(), *(c.operand for c in p.constants),
             *(o for operation in g.operations for o in operation.outputs)]
    return js_identifiers((id(o), own[id(o)] if _PLAIN_NAME_RE.match(own.get(id(o), ""))
                           and own[id(o)] not in JS_RESERVED else p.ident(o)) for o in order)


def _arrays(g: MLGraph) -> str:
    types = [o.data_type for o in g.outputs.values()]
    types += [g.inputs[n].data_type for n in g.narrowed_inputs if n in g.inputs]
    types += [*g.narrowed_inputs.values(), *g.narrowed_outputs.values()]
    entries = [f"{t}: {_ARRAY_NAMES[t]}" for t in dict.fromkeys(types)]
    return f"const ARRAYS = {{{', '.join(entries)}}};"


def _host_json(host: HostArgument) -> Mapping[str, Any] | None:
    return host.to_json() if isinstance(host, HostSteps) else host


def module_text(p: WebnnPlan, weights_file: str, host: HostArgument = None,
                outputs: Sequence[ValueInfo] | None = None,
                inputs: Sequence[ValueInfo] | None = None) -> str:
    """The ES module source for the plan's graph (see the module docstring); with `host`
    (host steps; `outputs` / `inputs`: the model's, a result's) also the steps' JavaScript,
    `GRAPH_OUTPUTS` and a createModel that runs them (`host_js_module`)."""
    steps = _host_json(host)
    g = p.graph
    names = _names(p)
    body: list[str] = ["  const builder = new MLGraphBuilder(context);"]
    for original, operand in g.inputs.items():
        body.append(f"  const {names[id(operand)]} = builder.input({js_string(original)}, "
                    f"{_descriptor(operand)});")
    for c in p.constants:
        body.append(f"  const {names[id(c.operand)]} = builder.constant("
                    f"{_descriptor(c.operand)}, {_constant_data(c)});")
    for operation in g.operations:
        call = _call(operation, names)
        outs = [names[id(o)] for o in operation.outputs]
        lhs = f"[{', '.join(outs)}]" if operator(operation.op).returns_list else outs[0]
        body.append(f"  const {lhs} = {call};")
    record = ", ".join(names[id(o)] if names[id(o)] == n else
                       f"[{js_string(n)}]: {names[id(o)]}" for n, o in g.outputs.items())
    body.append(f"  return builder.build({{{record}}});")
    example = ", ".join(f"{names[id(o)] if names[id(o)] == n else js_string(n)}: "
                        f"new {_ARRAY_NAMES[o.data_type].split()[-1]}({o.descriptor.size})"
                        for n, o in g.inputs.items())
    if steps:  # and the inputs only the host steps read
        example = ", ".join([*filter(None, [example]), *(
            f"{n if _PLAIN_NAME_RE.match(n) and n not in (*JS_RESERVED, '__proto__') else js_string(n)}: "
            f"new {_ARRAY_NAMES.get(t, 'Uint8Array').split()[-1]}({math.prod(shape)})"
            for n, t, shape in host_only_inputs(g, steps, inputs))])
    weights = (LOAD_WEIGHTS.replace("__SIZE__", str(p.weights_size)) if p.blob_constants
               else NO_WEIGHTS)
    stateful = bool(p.state)
    value = "value" if stateful else "feeds[d.name]"
    create = ((HOST_CREATE_MODEL if steps else CREATE_MODEL)
              .replace("__STATE_UPDATE__", STATE_UPDATE if stateful else "")
              .replace("__VALUE__", value)
              .replace("__STATE_DOC__", STATE_DOC if stateful else "")
              .replace("__STATE_SETUP__", STATE_SETUP if stateful else "")
              .replace("__INPUT_CHECK__", STATE_CHECK if stateful else CHECK)
              .replace("__RETURN__", STATE_RETURN if stateful else
                       "return Object.fromEntries(OUTPUTS.map((d, i) => [d.name, __RESULT__]));")
              .replace("__RESET__", "resetState, " if stateful else "")
              .replace("__FEED__", f"narrowInput(d, {value})" if g.narrowed_inputs else value)
              .replace("__RESULT__", "widenOutput(d, read[i])" if g.narrowed_outputs
                       else "new ARRAYS[d.dataType](read[i])"))
    input_rows = _io_rows(g.inputs.items(), g.narrowed_inputs)
    if steps:  # and the model inputs only the host steps read
        input_rows += host_input_rows(g, steps, inputs)
    head = [
        "// Generated by webnn-converter: rebuilds the graph with the browser's WebNN API.",
        "//   const model = await createModel(await navigator.ml.createContext());",
        f"//   const outputs = await model.compute({{{example}}});",
        "",
        f"export const GRAPH_NAME = {js_string(p.name)};",
        f"export const WEIGHTS_FILE = {js_string(weights_file)};",
        f"export const INPUTS = {_array(input_rows)};",
        *([f"export const GRAPH_OUTPUTS = {_io_list(g.outputs.items(), g.narrowed_outputs)};",
           f"export const OUTPUTS = {_array(host_output_rows(g, steps, outputs))};"] if steps else
          [f"export const OUTPUTS = {_io_list(g.outputs.items(), g.narrowed_outputs)};"]),
        _arrays(g),
        *([_state_rows(p)] if p.state else []),
        weights.rstrip("\n"),
        *([NARROW_INPUT.rstrip("\n")] if g.narrowed_inputs else []),
        *([WIDEN_OUTPUT.rstrip("\n")] if g.narrowed_outputs else []),
        "",
        "/** Build the graph on `context`; `weights`: loadWeights() (or the bytes it resolves to). */",
        "export async function buildGraph(context, weights) {",
    ]
    constants_file = None  # large host constants: read from <stem>.host.json
    if steps and host_constant_bytes(steps) > HOST_EMBED_LIMIT:
        constants_file = weights_file.removesuffix(".weights") + ".host.json"
    tail = [host_steps_js(steps, constants_file).rstrip("\n")] if steps else []
    return "\n".join(head + body + ["}", create, *tail])


def check_stem(stem: str) -> str:
    """File stems must be plain file names (letters, digits, `_`, `.`, `-`)."""
    if not isinstance(stem, str) or not _SAFE_STEM_RE.match(stem) or stem in (".", ".."):
        raise ValueError(f"stem {stem!r} must be a plain file name "
                         "([A-Za-z0-9_][A-Za-z0-9_.-]*)")
    return stem


def to_javascript(graph: MLGraph, stem: str = "model", name: str | None = None,
                  plan_: WebnnPlan | None = None, host: HostArgument = None,
                  outputs: Sequence[ValueInfo] | None = None,
                  inputs: Sequence[ValueInfo] | None = None) -> JavaScriptFiles:
    """Generate `<stem>.js` and `<stem>.html` for `graph` (in memory). The module reads
    `<stem>.weights`, written by `converter.io.serialize.weights.write_weights` from the
    same plan. `host`: the model's host steps (then `outputs` and `inputs`, a result's, say
    which graph outputs compute() returns and give the inputs only the host steps read;
    docs/host-steps-js.md)."""
    check_stem(stem)
    p = plan_ or plan(graph, name or stem)
    steps = _host_json(host)
    rows = {kind: [(n, o.data_type + (f" (given as {narrowed[n]}, range-checked)"
                                      if kind == "inputs" and n in narrowed else
                                      f" (returned as {narrowed[n]})" if n in narrowed else ""),
                    tuple(o.shape)) for n, o in items.items()]
            for kind, items, narrowed in (("inputs", graph.inputs, graph.narrowed_inputs),
                                          ("outputs", graph.outputs, graph.narrowed_outputs))}
    shown: list[tuple[str, str, tuple[int, ...] | None]] = [*rows["outputs"]]
    if steps:  # the model's outputs: those of the host steps have data-dependent shapes
        graph_rows = {r[0]: r for r in rows["outputs"]}
        shown = [graph_rows.get(n) or (n, dtype or "(data-dependent)", None)
                 for n, dtype in model_outputs(graph, steps, outputs)]
        rows["inputs"] += [(n, f"{t} (read by the host steps)", shape)
                           for n, t, shape in host_only_inputs(graph, steps, inputs)]
    return JavaScriptFiles(module_text(p, f"{stem}.weights", steps, outputs, inputs),
                           html_text(f"{stem}.js", f"{stem}.weights", page_file=f"{stem}.html",
                                     name=p.name, host=bool(steps), inputs=rows["inputs"],
                                     outputs=shown))


def write_javascript(graph: MLGraph, outdir: str | Path, stem: str = "model",
                     name: str | None = None, plan_: WebnnPlan | None = None,
                     host: HostArgument = None, outputs: Sequence[ValueInfo] | None = None,
                     inputs: Sequence[ValueInfo] | None = None) -> list[Path]:
    """Write `<stem>.js` and `<stem>.html` into `outdir` (the weights file is not written
    here; `converter.io.export.exporter.export(format="js")` writes everything)."""
    files = to_javascript(graph, stem, name, plan_, host, outputs, inputs)
    outdir = Path(outdir)
    js_path, html_path = outdir / f"{stem}.js", outdir / f"{stem}.html"
    js_path.write_text(files.module, encoding="utf-8")
    html_path.write_text(files.html, encoding="utf-8")
    return [js_path, html_path]


__all__ = ["JavaScriptFiles", "check_stem", "html_literal", "html_text", "js_string", "js_value",
           "module_text", "to_javascript", "write_javascript"]
