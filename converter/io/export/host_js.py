"""JavaScript of a model's host steps (docs/host-steps-js.md): from the JSON form of
`converter.results.host_steps.HostSteps` (`to_json()`, format "webnn-host-steps" version 1),
plain JavaScript with no dependency that runs the steps' ONNX nodes in order with
onnxruntime's semantics, embedded in the exported module (`converter.io.export.javascript`).

`host_steps_js(host)` gives the text: the tensor helpers (`host_js_runtime.CORE`), one
`op<Name>(node, inputs, opset, env)` function per operator the steps use (and only those:
`host_js_ops_math`, `host_js_ops_shape`, `host_js_ops_select`), the steps' constants as
`hostConstant(dataType, shape, base64)` (decoded once, when the module loads), the nodes as
a `HOST_NODES` array, `HOST_INPUTS` / `HOST_OUTPUTS` and `runHostSteps(values)`:
`values` maps every HOST_INPUTS name to `{dataType, shape, data}` (int64 data as Int32Array or
BigInt64Array), the result maps every HOST_OUTPUTS name to `{dataType, shape, data}` (int64 as
BigInt64Array, bool as Uint8Array). A step that fails throws an Error naming the node and op.

Safety: names (nodes, values, constants), op names and string attributes are written only as
`js_string` literals; attribute keys must be plain lower-case-led words (not `__proto__`);
numbers are checked to be numbers, base64 text to be base64, data types to be known. Model
strings never become identifiers: a node's function is chosen from this module's table.

Restrictions: only default-domain (ai.onnx) operators listed in `HOST_JS_OPS`; a node of
another op raises `WebnnExportError` naming the node and op (the Python runtime still runs
it, so `convert` and `run` work; only the JavaScript export stops). See each op module's
docstring for the per-operator restrictions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from converter.io.export.host_js_ops_math import MATH_HELPERS, MATH_OPS
from converter.io.export.host_js_ops_select import SELECT_OPS
from converter.io.export.host_js_ops_shape import SHAPE_HELPERS, SHAPE_OPS
from converter.io.export.host_js_runtime import CORE, HELPERS, JsOp
from converter.io.export.literals import js_number, js_string
from converter.io.serialize.errors import WebnnExportError

__all__ = ["HOST_JS_OPS", "host_constant_bytes", "host_steps_js"]

HOST_JS_OPS: dict[str, JsOp] = {**MATH_OPS, **SHAPE_OPS, **SELECT_OPS}
"""Every operator the JavaScript host runtime implements, by ONNX name."""

_HELPER_CODE: dict[str, str] = {**HELPERS, **MATH_HELPERS, **SHAPE_HELPERS}
_DATA_TYPES = frozenset({"float32", "float16", "float64", "int8", "uint8", "int16", "uint16",
                         "int32", "uint32", "int64", "uint64", "bool"})
_KEY_RE = re.compile(r"[a-z][A-Za-z0-9_]*\Z")
_BASE64_RE = re.compile(r"[A-Za-z0-9+/]*={0,2}\Z")
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_MAX_DEPTH = 16


def _fail(text: str) -> WebnnExportError:
    return WebnnExportError(f"host steps: {text}")


def _int(value: Any, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(f"{where}: {value!r} is not an integer")
    return str(value)


def _float(value: Any, where: str) -> str:
    if isinstance(value, str) and value in _NON_FINITE:
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(f"{where}: {value!r} is not a number")
    return js_number(float(value))


def _list(values: Any, where: str) -> Sequence[Any]:
    if not isinstance(values, list | tuple):
        raise _fail(f"{where}: expected a list")
    return values


def _tensor(value: Any, where: str) -> str:
    """`hostConstant(dataType, shape, base64)` for a JSON tensor."""
    if not isinstance(value, Mapping):
        raise _fail(f"{where}: expected {{dataType, shape, base64}}")
    data_type, shape, text = value.get("dataType"), value.get("shape"), value.get("base64")
    if data_type not in _DATA_TYPES:
        raise _fail(f"{where}: unknown data type {data_type!r}")
    dims = [_int(d, where) for d in _list(shape, where)]
    if any(int(d) < 0 for d in dims):
        raise _fail(f"{where}: negative dimension in {shape!r}")
    if not isinstance(text, str) or not _BASE64_RE.match(text):
        raise _fail(f"{where}: the data is not base64 text")
    return f"hostConstant({js_string(data_type)}, [{', '.join(dims)}], {js_string(text)})"


def _attribute(value: Any, where: str, used: dict[str, None], depth: int) -> str:
    """The JavaScript value of one typed JSON attribute ({"int": n}, {"floats": [...]}...;
    a {"graph"} is an If branch: `{outputs, nodes}`, its ops added to `used`)."""
    if not isinstance(value, Mapping) or len(value) != 1:
        raise _fail(f"{where}: expected one typed value such as {{\"int\": 1}}")
    [(kind, v)] = value.items()
    if kind == "int":
        return _int(v, where)
    if kind == "float":
        return _float(v, where)
    if kind == "string":
        if not isinstance(v, str):
            raise _fail(f"{where}: {v!r} is not a string")
        return js_string(v)
    if kind == "tensor":
        return _tensor(v, where)
    if kind == "graph":
        return _graph(v, where, used, depth + 1)
    item = {"ints": _int, "floats": _float, "strings": None}.get(kind, ...)
    if item is ...:
        raise _fail(f"{where}: unknown attribute type {kind!r}")
    items = _list(v, where)
    if item is None:
        if not all(isinstance(s, str) for s in items):
            raise _fail(f"{where}: expected a list of strings")
        return "[" + ", ".join(js_string(s) for s in items) + "]"
    return "[" + ", ".join(item(x, where) for x in items) + "]"


def _names(values: Any, where: str) -> str:
    items = _list(values, where)
    if not all(isinstance(n, str) for n in items):
        raise _fail(f"{where}: names must be strings")
    return "[" + ", ".join(js_string(n) for n in items) + "]"


def _graph(value: Any, where: str, used: dict[str, None], depth: int) -> str:
    """An If branch `{outputs, nodes}` (its nodes read the values defined before the If)."""
    if depth > _MAX_DEPTH:
        raise _fail(f"{where}: subgraphs nested over {_MAX_DEPTH} deep")
    if not isinstance(value, Mapping) or _list(value.get("inputs", []), where):
        raise _fail(f"{where}: expected a subgraph without inputs (an If branch)")
    pad = "  " * depth
    records = [_node(n, i, used, depth) for i, n in enumerate(_list(value.get("nodes"), where))]
    return (f"{{outputs: {_names(value.get('outputs'), where)}, nodes: [\n"
            + "".join(f"{pad}  {r},\n" for r in records) + f"{pad}]}}")


def _node(node: Any, index: int, used: dict[str, None], depth: int = 0) -> str:
    """The node's JavaScript record; its op (and its branches' ops) added to `used`."""
    if not isinstance(node, Mapping):
        raise _fail(f"node {index}: expected an object")
    name, op, domain = node.get("name", ""), node.get("op"), node.get("domain", "")
    where = f"node {name!r} ({op})"
    if not isinstance(name, str) or not isinstance(op, str):
        raise _fail(f"node {index}: name and op must be strings")
    if domain not in ("", "ai.onnx") or op not in HOST_JS_OPS:
        shown = op if domain in ("", "ai.onnx") else f"{domain}::{op}"
        raise _fail(f"node {name!r}: no JavaScript implementation of {shown} (the Python "
                    "host runtime runs it; export another format or drop the step)")
    attributes = node.get("attributes", {})
    if not isinstance(attributes, Mapping):
        raise _fail(f"{where}: attributes must be an object")
    entries = []
    for key, value in attributes.items():
        if not isinstance(key, str) or not _KEY_RE.match(key):
            raise _fail(f"{where}: attribute name {key!r} is not a plain word")
        entries.append(f"{key}: {_attribute(value, f'{where} attribute {key}', used, depth)}")
    used[op] = None
    record = (f"{{name: {js_string(name)}, op: {js_string(op)}, run: op{op}, "
              f"inputs: {_names(node.get('inputs', []), where)}, "
              f"outputs: {_names(node.get('outputs', []), where)}, "
              f"attributes: {{{', '.join(entries)}}}}}")
    return record


_RUN = r"""
/** Run `nodes` in order on `env` (name -> tensor), adding their outputs to it. */
function runNodes(nodes, env) {
  for (const node of nodes) {
    const inputs = node.inputs.map((name) => {
      if (name === "") return null;
      if (!env.has(name)) throw new Error(`host step ${JSON.stringify(node.name)} (${node.op}): no value ${JSON.stringify(name)}`);
      return env.get(name);
    });
    let outputs;
    try {
      outputs = node.run(node, inputs, HOST_OPSET, env);
    } catch (error) {
      throw new Error(`host step ${JSON.stringify(node.name)} (${node.op}): ${error.message}`);
    }
    node.outputs.forEach((name, i) => { if (name !== "" && outputs[i]) env.set(name, outputs[i]); });
  }
}

/**
 * Run the host steps: `values` maps every HOST_INPUTS name to {dataType, shape, data}
 * (int64 data as Int32Array or BigInt64Array); the result maps every HOST_OUTPUTS name to
 * {dataType, shape, data} (int64 as BigInt64Array, bool as Uint8Array). The shapes depend on
 * the data. A failing step throws an Error naming the node and its op.
 */
export function runHostSteps(values) {
  if (!HOST_CONSTANTS) throw new Error("runHostSteps: the constants are not loaded (await loadHostSteps() first)");
  const env = new Map(HOST_CONSTANTS);
  for (const {name} of HOST_INPUTS) {
    if (!Object.hasOwn(values, name)) throw new TypeError(`runHostSteps: no value for ${JSON.stringify(name)}`);
    env.set(name, hostInput(name, values[name]));
  }
  runNodes(HOST_NODES, env);
  return Object.fromEntries(HOST_OUTPUTS.map((name) => {
    if (!env.has(name)) throw new Error(`runHostSteps: no step gives output ${JSON.stringify(name)}`);
    return [name, hostOutput(env.get(name))];
  }));
}
"""


_LOAD_EMBEDDED = """
/** The steps' constants are in this module: nothing to load. */
export async function loadHostSteps() {}"""

_LOAD_FILE = r"""
let HOST_CONSTANTS = null;
/** Read the steps' constants (HOST_CONSTANT_NAMES) from HOST_FILE, next to this module, once. */
export async function loadHostSteps(url = new URL(HOST_FILE, import.meta.url)) {
  if (HOST_CONSTANTS) return;
  const response = await fetch(url);
  if (!response.ok) throw new Error(`host steps: ${url}: HTTP ${response.status}`);
  const constants = (await response.json())?.constants ?? {};
  HOST_CONSTANTS = new Map(HOST_CONSTANT_NAMES.map((name) => {
    const t = Object.hasOwn(constants, name) ? constants[name] : null;
    if (!t || !Object.hasOwn(HOST_ARRAYS, t.dataType) || !Array.isArray(t.shape) || typeof t.base64 !== "string") {
      throw new Error(`host steps: ${HOST_FILE} has no constant ${JSON.stringify(name)}`);
    }
    return [name, hostConstant(t.dataType, t.shape, t.base64)];
  }));
}"""


def host_constant_bytes(host: Mapping[str, Any]) -> int:
    """The size of the host steps' constants (bytes, from their base64 text)."""
    constants = host.get("constants", {})
    if not isinstance(constants, Mapping):
        return 0
    return sum(len(t.get("base64", "")) * 3 // 4 for t in constants.values()
               if isinstance(t, Mapping) and isinstance(t.get("base64"), str))


def host_steps_js(host: Mapping[str, Any], constants_file: str | None = None) -> str:
    """The JavaScript text of the host steps `host` (their JSON form; see the module
    docstring). With `constants_file` (the `<stem>.host.json` written beside the module) the
    constants are not embedded: `loadHostSteps()` fetches them from that file once (before
    that, runHostSteps throws); else they are in the module and `loadHostSteps()` does
    nothing. Raises `WebnnExportError` (one line, naming the node and op) for an operator
    without a JavaScript implementation or a malformed step."""
    if not isinstance(host, Mapping) or host.get("format") != "webnn-host-steps" \
            or host.get("version") != 1:
        raise _fail("expected the JSON form {\"format\": \"webnn-host-steps\", \"version\": 1, ...}")
    opsets = host.get("opsets", {})
    opset = opsets.get("", opsets.get("ai.onnx")) if isinstance(opsets, Mapping) else None
    if isinstance(opset, bool) or not isinstance(opset, int):
        raise _fail("opsets: no default-domain opset")
    used_ops: dict[str, None] = {}
    records = [_node(node, i, used_ops) for i, node in
               enumerate(_list(host.get("nodes"), "nodes"))]
    used = list(used_ops)
    needs = {need for op in used for need in HOST_JS_OPS[op].needs}
    helpers = [code for name, code in _HELPER_CODE.items() if name in needs]
    constants = host.get("constants", {})
    if not isinstance(constants, Mapping):
        raise _fail("constants: expected an object")
    constant_rows = [f"  [{js_string(str(n))}, {_tensor(t, f'constant {n!r}')}]," for n, t in
                     constants.items()]
    inputs = []
    for item in _list(host.get("inputs"), "inputs"):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str) \
                or item.get("source") not in ("graph", "input"):
            raise _fail("inputs: expected {name, source: \"graph\" or \"input\"} rows")
        inputs.append(f"  {{name: {js_string(item['name'])}, "
                      f"source: {js_string(item['source'])}}},")
    parts = [
        CORE.strip("\n"),
        *(code.strip("\n") for code in helpers),
        *(HOST_JS_OPS[op].code.strip("\n") for op in used),
        "",
        f"const HOST_OPSET = {opset};",
        *(["/** The steps' constants, decoded once. */",
           "const HOST_CONSTANTS = new Map([", *constant_rows, "]);", _LOAD_EMBEDDED.strip("\n")]
          if constants_file is None else
          [f"export const HOST_FILE = {js_string(constants_file)};",
           f"const HOST_CONSTANT_NAMES = {_names(list(constants), 'constants')};",
           _LOAD_FILE.strip("\n")]),
        "/** The host steps in order: ONNX nodes run after the graph. */",
        "const HOST_NODES = [", *(f"  {record}," for record in records), "];",
        "/** The values the steps read: graph outputs (\"graph\") and model inputs (\"input\"). */",
        "export const HOST_INPUTS = [", *inputs, "];",
        f"export const HOST_OUTPUTS = {_names(host.get('outputs'), 'outputs')};",
        _RUN.strip("\n"),
    ]
    return "\n".join(parts) + "\n"
