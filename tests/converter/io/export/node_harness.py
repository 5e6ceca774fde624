"""Runs exported JavaScript in node (`needs_node` skips without it): `_write` exports a graph
(module, page, weights), `_replay` runs the module against HARNESS's recording fake
`MLGraphBuilder` (`_enc` encodes the graph's arguments the same way, for comparison),
`_run_check` runs a check script beside a module, `_run_page` runs the page with a fake DOM
and a fake WebNN context (PAGE_HARNESS)."""

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

from converter.core.webnn import MLGraph, MLOperand
from converter.core.webnn.operators import operator
from converter.io.export.javascript import to_javascript
from converter.io.serialize.plan import WebnnPlan, plan
from converter.io.serialize.weights import write_weights

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


HANG_GUARD_S = 600
"""How long a node run may take before it counts as hung (a guard, not a speed limit)."""


def _node(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """`node ARGS...`, its output captured as text."""
    assert NODE is not None
    return subprocess.run([NODE, *map(str, args)], capture_output=True, text=True,
                          timeout=HANG_GUARD_S)


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


def _run_check(module: str, check: str, folder: Path) -> Any:
    """The JSON that the script `check` prints when run in node with the generated `module`
    (written to `folder` as model.mjs) given as a file URL argument."""
    (folder / "model.mjs").write_text(module, encoding="utf-8")
    (folder / "check.mjs").write_text(check, encoding="utf-8")
    run = _node(folder / "check.mjs", (folder / "model.mjs").as_uri())
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def _replay(graph: MLGraph, js: Path, weights: Path, folder: Path) -> dict[str, Any]:
    """buildGraph(loadWeights()) of the written module `js` (with `weights`) run in node with
    HARNESS's recording MLGraphBuilder; what it recorded ({"calls": [...], ...})."""
    counts = [[len(o.outputs), operator(o.op).returns_list] for o in graph.operations]
    (folder / "counts.json").write_text(json.dumps(counts))
    (folder / "harness.mjs").write_text(HARNESS)
    result = _node(folder / "harness.mjs", js.as_uri(), weights, folder / "counts.json",
                   folder / "out.json")
    assert result.returncode == 0, result.stderr
    out: dict[str, Any] = json.loads((folder / "out.json").read_text())
    return out


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



PAGE_HARNESS = r"""
import fs from "node:fs";
const [pagePath, weightsPath, outPath, mode, inputsJson] = process.argv.slice(2);
const elements = new Map();
const element = (id) => {
  if (!elements.has(id)) {
    elements.set(id, {id, textContent: "", value: id === "runs" ? "3" : "", className: "",
                      disabled: false, files: [], listeners: {},
                      addEventListener(type, fn) { this.listeners[type] = fn; }});
  }
  return elements.get(id);
};
element("inputs").value = inputsJson;
globalThis.document = {getElementById: element, baseURI: new URL(".", "file://" + pagePath).href,
                       title: ""};
if (mode === "file") globalThis.location = {protocol: "file:"};
const blob = fs.readFileSync(weightsPath);
let fetches = 0;
globalThis.fetch = async () => { fetches++; return {ok: true, status: 200,
  arrayBuffer: async () => blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength)}; };
let nextId = 0;
const built = [];
globalThis.MLGraphBuilder = function () {
  return new Proxy({}, {get(target, prop) {
    if (prop === "build") return async (outputs) => { built.push(Object.keys(outputs)); return {}; };
    if (prop === "then") return undefined;
    return (...args) => {
      if (prop === "split") return Array.from({length: 8}, () => ({id: nextId++}));
      if (prop === "gru" || prop === "lstm" || prop === "lstmCell") {
        return Array.from({length: 3}, () => ({id: nextId++}));
      }
      return {id: nextId++};
    };
  }});
};
const SIZES = {float32: 4, float16: 2, int32: 4, uint32: 4, int64: 8, uint64: 8, int8: 1, uint8: 1};
const dispatched = [], written = [];
if (mode === "webnn" || mode === "file") {
  globalThis.navigator = {ml: {async createContext(options) {
    return {
      async createTensor(desc) { return {desc, data: null}; },
      writeTensor(tensor, data) {
        written.push({type: data.constructor.name, length: data.length, writable: tensor.desc.writable,
                      first: typeof data[0] === "bigint" ? String(data[0]) : data[0]});
        tensor.data = data;
      },
      dispatch(graph, inputs, outputs) {
        dispatched.push({inputs: Object.keys(inputs), outputs: Object.keys(outputs)});
      },
      async readTensor(tensor) {
        const n = tensor.desc.shape.reduce((a, b) => a * b, 1);
        return new ArrayBuffer(n * SIZES[tensor.desc.dataType]);
      },
    };
  }}};
} else {
  globalThis.navigator = {};
}
const started = Date.now();
await import(new URL("file://" + pagePath).href);
while (!element("controls").listeners.submit && Date.now() - started < 5000 &&
       !element("status").className) {
  await new Promise((resolve) => setTimeout(resolve, 5));
}
if (element("controls").listeners.submit) {
  await element("controls").listeners.submit({preventDefault() {}});
}
fs.writeFileSync(outPath, JSON.stringify({
  status: element("status").textContent, statusClass: element("status").className,
  log: element("log").textContent, title: element("title").textContent,
  documentTitle: document.title, built, dispatched, written, fetches,
  timings: Object.fromEntries(["t-weights", "t-context", "t-build", "t-first", "t-average"]
    .map((id) => [id, element(id).textContent]))}));
"""


def _run_page(tmp_path: Path, graph: MLGraph, mode: str = "webnn", inputs: str = ""
              ) -> dict[str, Any]:
    p = plan(graph, "page test")
    return run_page_files(tmp_path, to_javascript(graph, "model", plan_=p), p, mode, inputs)


def run_page_files(tmp_path: Path, files: Any, p: WebnnPlan, mode: str = "webnn",
                   inputs: str = "") -> dict[str, Any]:
    """The generated page of `files` (`to_javascript`'s, weights planned by `p`) run in node
    against the fake WebNN of PAGE_HARNESS: its final state (status, log, outputs)."""
    (tmp_path / "package.json").write_text('{"type": "module"}')
    (tmp_path / "model.js").write_text(files.module)
    (tmp_path / "page.js").write_text(_script(files.html))
    with open(tmp_path / "model.weights", "wb") as f:
        write_weights(p, f)
    (tmp_path / "harness.mjs").write_text(PAGE_HARNESS)
    result = _node(tmp_path / "harness.mjs", tmp_path / "page.js", tmp_path / "model.weights",
                   tmp_path / "out.json", mode, inputs)
    assert result.returncode == 0, result.stderr
    page: dict[str, Any] = json.loads((tmp_path / "out.json").read_text())
    return page
