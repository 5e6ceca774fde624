"""JavaScript/HTML export: syntax (`node --check`), a replay of the generated module in node
against a recording fake `MLGraphBuilder` (every call, option and constant byte compared with
the graph), and inert output for hostile names."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter.export.javascript import check_stem, js_string, to_javascript
from converter.export.webnn_format import MULTI_OUTPUT_OPS, plan, write_weights
from converter.webnn import MLGraph, MLOperand

from .graphs import FAMILIES, HOSTILE_NAMES

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")

HARNESS = r"""
import fs from "node:fs";
const [modulePath, weightsPath, countsPath, outPath] = process.argv.slice(2);
const counts = JSON.parse(fs.readFileSync(countsPath, "utf8"));
const calls = [];
let nextId = 0, opIndex = 0;
class FakeOperand { constructor() { this.id = nextId++; } }
const enc = (v) => {
  if (v instanceof FakeOperand) return {operand: v.id};
  if (typeof v === "bigint") return {bigint: v.toString()};
  if (typeof v === "number" && !Number.isFinite(v)) return {number: String(v)};
  if (Array.isArray(v)) return v.map(enc);
  if (ArrayBuffer.isView(v)) {
    return {typed: v.constructor.name,
            hex: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("hex")};
  }
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, enc(x)]));
  }
  return v;
};
globalThis.MLGraphBuilder = function (context) {
  const base = {
    input(name, desc) {
      const o = new FakeOperand();
      calls.push({op: "input", args: enc([name, desc]), out: [o.id]});
      return o;
    },
    constant(desc, data) {
      const o = new FakeOperand();
      calls.push({op: "constant", args: enc([desc, data]), out: [o.id]});
      return o;
    },
    async build(outputs) {
      calls.push({op: "build", keys: Object.keys(outputs),
                  ids: Object.values(outputs).map((o) => o.id),
                  plainPrototype: Object.getPrototypeOf(outputs) === Object.prototype});
      return {fake: true};
    },
  };
  return new Proxy(base, {get(target, prop) {
    if (prop in target) return target[prop];
    return (...args) => {
      const [n, multi] = counts[opIndex++];
      const outs = Array.from({length: n}, () => new FakeOperand());
      calls.push({op: prop, args: enc(args), out: outs.map((o) => o.id)});
      return multi ? outs : outs[0];
    };
  }});
};
const blob = fs.readFileSync(weightsPath);
const buffer = blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength);
globalThis.fetch = async () => ({ok: true, status: 200, arrayBuffer: async () => buffer});
const mod = await import(modulePath);
const weights = await mod.loadWeights();
const graph = await mod.buildGraph({}, weights);
fs.writeFileSync(outPath, JSON.stringify({calls, graph, name: mod.GRAPH_NAME,
  inputs: mod.INPUTS, outputs: mod.OUTPUTS}));
"""

TYPED = {"float32": "Float32Array", "int32": "Int32Array", "uint32": "Uint32Array",
         "int64": "BigInt64Array", "uint64": "BigUint64Array", "int8": "Int8Array",
         "uint8": "Uint8Array"}


def _node(*args: str | Path) -> subprocess.CompletedProcess[str]:
    assert NODE is not None
    return subprocess.run([NODE, *map(str, args)], capture_output=True, text=True, timeout=60)


def _write(graph: MLGraph, folder: Path, stem: str = "model") -> tuple[Path, Path, Path]:
    p = plan(graph, "the graph")
    files = to_javascript(graph, stem, plan_=p)
    js = folder / f"{stem}.mjs"
    js.write_text(files.module)
    html = folder / f"{stem}.html"
    html.write_text(files.html)
    weights = folder / f"{stem}.weights"
    with open(weights, "wb") as f:
        write_weights(p, f)
    return js, html, weights


def _enc(value: Any, ids: dict[int, int]) -> Any:
    if isinstance(value, MLOperand):
        return {"operand": ids[id(value)]}
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return {"bigint": str(int(value))} if abs(int(value)) > 2**53 - 1 else int(value)
    if isinstance(value, float | np.floating):
        f = float(value)
        if math.isnan(f):
            return {"number": "NaN"}
        return f if math.isfinite(f) else {"number": "Infinity" if f > 0 else "-Infinity"}
    if isinstance(value, list | tuple):
        return [_enc(v, ids) for v in value]
    return value


def _script(html: str) -> str:
    match = re.search(r'<script type="module">(.*?)</script>', html, re.S)
    assert match
    return match.group(1)


# -- syntax ---------------------------------------------------------------------------------
@needs_node
@pytest.mark.parametrize("family", list(FAMILIES))
def test_module_and_page_pass_node_check(family: str, tmp_path: Path) -> None:
    js, html, _ = _write(FAMILIES[family]().graph, tmp_path)
    result = _node("--check", js)
    assert result.returncode == 0, result.stderr
    script = tmp_path / "page.mjs"
    script.write_text(_script(html.read_text()))
    result = _node("--check", script)
    assert result.returncode == 0, result.stderr


# -- replay in node -------------------------------------------------------------------------
@needs_node
@pytest.mark.parametrize("family", list(FAMILIES))
def test_module_replays_the_graph(family: str, tmp_path: Path) -> None:
    """Run buildGraph(loadWeights()) in node with a recording MLGraphBuilder; every call must
    match the graph: input names/descriptors, constant bytes, op names, positional
    arguments, options, and the output record."""
    graph = FAMILIES[family]().graph
    p = plan(graph)
    js, _, weights = _write(graph, tmp_path)
    counts = [[len(o.outputs), o.op in MULTI_OUTPUT_OPS] for o in graph.operations]
    (tmp_path / "counts.json").write_text(json.dumps(counts))
    (tmp_path / "harness.mjs").write_text(HARNESS)
    result = _node(tmp_path / "harness.mjs", js.as_uri(), weights, tmp_path / "counts.json",
                   tmp_path / "out.json")
    assert result.returncode == 0, result.stderr
    out = json.loads((tmp_path / "out.json").read_text())
    calls = out["calls"]

    ids: dict[int, int] = {}
    expected: list[dict[str, Any]] = []
    for name, operand in graph.inputs.items():
        ids[id(operand)] = len(ids)
        expected.append({"op": "input", "args": [name, {"dataType": operand.data_type,
                                                        "shape": list(operand.shape)}],
                         "out": [ids[id(operand)]]})
    for c in p.constants:
        operand = c.operand
        ids[id(operand)] = len(ids)
        arr = operand.value
        assert arr is not None
        expected.append({"op": "constant", "out": [ids[id(operand)]],
                         "args": [{"dataType": operand.data_type, "shape": list(operand.shape)},
                                  {"typed": TYPED.get(operand.data_type),
                                   "hex": np.ascontiguousarray(arr, arr.dtype.newbyteorder("<"))
                                   .tobytes().hex()}]})
    for operation in graph.operations:
        args = [_enc(a, ids) for a in operation.args]
        options = {k: _enc(v, ids) for k, v in operation.options.items() if v is not None}
        if options:
            args.append(options)
        outs = []
        for o in operation.outputs:
            ids[id(o)] = len(ids)
            outs.append(ids[id(o)])
        expected.append({"op": operation.op, "args": args, "out": outs})

    assert len(calls) == len(expected) + 1
    for got, want in zip(calls, expected, strict=False):
        if want["op"] == "constant" and want["args"][1]["typed"] is None:  # float16
            assert got["args"][1]["typed"] in ("Uint16Array", "Float16Array")
            got["args"][1]["typed"] = None
        assert got == want
    build = calls[-1]
    assert build["op"] == "build" and build["plainPrototype"]
    assert build["keys"] == list(graph.outputs)
    assert build["ids"] == [ids[id(o)] for o in graph.outputs.values()]
    assert out["graph"] == {"fake": True}
    assert out["name"] == "the graph"
    assert [i["name"] for i in out["inputs"]] == list(graph.inputs)
    assert [o["name"] for o in out["outputs"]] == list(graph.outputs)
    assert [o["shape"] for o in out["outputs"]] == [list(o.shape)
                                                    for o in graph.outputs.values()]


@needs_node
def test_weights_loader_rejects_a_truncated_blob(tmp_path: Path) -> None:
    js, _, weights = _write(FAMILIES["constants"]().graph, tmp_path)
    weights.write_bytes(weights.read_bytes()[:-3])
    script = tmp_path / "load.mjs"
    script.write_text(
        'import fs from "node:fs";\n'
        f"const blob = fs.readFileSync({json.dumps(str(weights))});\n"
        f"const mod = await import({json.dumps(js.as_uri())});\n"
        "try { mod.weightsFromBuffer(blob.buffer.slice(blob.byteOffset, blob.byteOffset +"
        " blob.byteLength)); console.log('loaded'); }\n"
        "catch (e) { console.log(String(e)); }\n")
    result = _node(script)
    assert result.returncode == 0, result.stderr
    assert "lies outside the file" in result.stdout


# -- hostile names --------------------------------------------------------------------------
DANGEROUS = ["</script>", "<script>", "\u2028", "\u2029", "\n", "<!--", "]]>", "&amp;"]


def test_hostile_names_are_inert_in_module_and_page() -> None:
    graph = FAMILIES["hostile"]().graph
    files = to_javascript(graph, "model", name="</script><b>bold</b>\u2028")
    for text in (files.module, files.html):
        assert text.isascii() or text is files.html
        for name in HOSTILE_NAMES:
            if any(d in name for d in DANGEROUS) or '"' in name or "\\" in name:
                assert name not in text, name
    assert files.module.isascii()
    assert "</script" not in files.module.lower() and "<!--" not in files.module
    assert files.html.lower().count("</script") == 1
    assert "<b>" not in files.module and "<b>" not in files.html
    # every hostile name is still present, escaped, as a JSON string literal
    for name in HOSTILE_NAMES:
        assert js_string(name) in files.module


@pytest.mark.parametrize("text", [*HOSTILE_NAMES, "\ud800", "\x00\x1f\x7f", "`${1}`"])
def test_js_string_is_json_and_inert(text: str) -> None:
    literal = js_string(text)
    assert json.loads(literal) == text
    assert literal.isascii()
    assert not set(literal) & set("<>&\u2028\u2029\n\r")
    assert literal.startswith('"') and literal.endswith('"')


@pytest.mark.parametrize("stem", ["../x", "a/b", "", ".hidden", "x y", "é", "a\\b"])
def test_unsafe_stems_are_rejected(stem: str) -> None:
    with pytest.raises(ValueError, match="plain file name"):
        check_stem(stem)


def test_page_mentions_the_module_and_weights_as_literals_only() -> None:
    files = to_javascript(FAMILIES["conv"]().graph, "my-model.v2")
    assert 'const MODULE_URL = "./my-model.v2.js";' in files.html
    assert 'const WEIGHTS_URL = "./my-model.v2.weights";' in files.html
    assert 'export const WEIGHTS_FILE = "my-model.v2.weights";' in files.module
    assert "navigator.ml" in files.html and "createContext" in files.html
    assert "dispatch(" in files.html and "readTensor(" in files.html
    assert "WebNN is not available" in files.html
