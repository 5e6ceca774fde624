"""The runner page of the JavaScript export (`<stem>.html`): how to serve it and why file://
fails, the inputs and outputs as static tables, the timings, and the hooks automated checks
read (see `converter.io.export.javascript` for the whole contract)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from converter.io.export.literals import html_literal, js_string

__all__ = ["PAGE_HOOKS", "PAGE_STATUS", "html_text"]

PAGE_STATUS = """\
<p id="status">Loading&hellip; If this message stays, the page's script could not run: serve
this folder over HTTP as described below.</p>
<noscript><p class="error">This page needs JavaScript and a browser with WebNN.</p></noscript>
<details id="help" open>
<summary>How to open this page</summary>"""
"""The status line an exported page starts with (it says what to do when the script cannot
run), and the opening of its serving instructions (`<details id="help">`, folded away once
the page runs): `__STATUS__` in a page template."""

PAGE_HOOKS = """\
let settleReady, settleResult;
globalThis.__webnnReady = new Promise((resolve) => { settleReady = resolve; });
globalThis.__webnnResult = new Promise((resolve) => { settleResult = resolve; });
const status = (text, error = false) => {
  $("status").textContent = text;
  $("status").className = error ? "error" : "";
  if (error) {
    settleReady({ok: false, error: text});
    settleResult({ok: false, error: text});
  }
};"""
"""The page script's hooks for automated checks (`__webnnReady`, `__webnnResult`, settled with
{ok: false, error} by the first `status(text, true)`) and its `status` line writer; expects
`$` (getElementById) defined before it: `__HOOKS__` in a page template."""

_HTML = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>WebNN model: __NAME__</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; max-width: 60rem; }
  textarea { width: 100%; min-height: 6rem; font-family: monospace; }
  pre { background: #f4f4f4; padding: .75rem; overflow: auto; }
  table { border-collapse: collapse; margin: .5rem 0 1rem; }
  th, td { border-bottom: 1px solid #ddd; padding: 2px 10px 2px 0; text-align: left; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; }
  .error { color: #b00020; }
</style>
</head>
<body>
<h1 id="title">WebNN model: __NAME__</h1>
__STATUS__
<p>Serve this folder over HTTP, for example with Python:</p>
<pre>cd path/to/this/folder
python3 -m http.server</pre>
<p>and open <a href="http://localhost:8000/__PAGE__">http://localhost:8000/__PAGE__</a> in a
browser with WebNN (<code>navigator.ml</code>: Chrome or Edge with WebNN enabled).
Opening the file directly (a <code>file://</code> URL) does not work: browsers block module
scripts (<code>__MODULE_FILE__</code>) and <code>fetch()</code> of the weights
(<code>__WEIGHTS_FILE__</code>) on <code>file://</code> pages.</p>
</details>
<h2>Inputs</h2>
__INPUTS__
<h2>Outputs</h2>
__OUTPUTS__
<form id="controls">
  <label>Power preference
    <select id="power"><option>default</option><option>high-performance</option>
    <option>low-power</option></select></label>
  <label>Timed runs <input id="runs" type="number" min="1" max="1000" value="10"></label>
  <p>Inputs as JSON (<code>{"input name": [flat values]}</code>); empty means random values.
  <input id="file" type="file" accept=".json,application/json"></p>
  <textarea id="inputs" spellcheck="false"></textarea>
  <p><button id="run" type="submit" disabled>Run</button></p>
</form>
<h2>Timings</h2>
<table id="timings">
<tr><th>Weights load</th><td class="num" id="t-weights">&ndash;</td></tr>
<tr><th>Context creation</th><td class="num" id="t-context">&ndash;</td></tr>
<tr><th>Graph build</th><td class="num" id="t-build">&ndash;</td></tr>
<tr><th>First compute (dispatch + read)</th><td class="num" id="t-first">&ndash;</td></tr>
<tr><th>Average compute</th><td class="num" id="t-average">&ndash;</td></tr>
</table>
<pre id="log"></pre>
<script type="module">
const MODULE_URL = __MODULE__;
const WEIGHTS_URL = __WEIGHTS__;
const PAGE_FILE = __PAGE_JS__;
const $ = (id) => document.getElementById(id);
// For automated checks (webnn-convert validate --browser, the browser tests): promises that
// settle once the page is ready ({ok}) and once the first run is done ({ok, outputs:
// {name: {dataType, shape, buffer}}, timings}) or on the first error ({ok: false, error}).
// Nothing on the page depends on them.
__HOOKS__
const log = (line) => { $("log").textContent += line + "\\n"; };
const ms = (id, value) => { $(id).textContent = `${value.toFixed(2)} ms`; };

function toHalfBits(value) {
  const f32 = new Float32Array([value]);
  const x = new Uint32Array(f32.buffer)[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1), mid = 1 << (shift - 1);
    if (rest > mid || (rest === mid && (half & 1))) half += 1;
    return sign | half;
  }
  let half = sign | (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1))) half += 1;
  return half;
}

const ARRAYS = {float32: Float32Array, float16: globalThis.Float16Array ?? Uint16Array,
  int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
  int8: Int8Array, uint8: Uint8Array};

function fillTyped(desc, values) {
  const Ctor = ARRAYS[desc.dataType];
  const count = desc.shape.reduce((a, b) => a * b, 1);
  if (values.length !== count) {
    throw new Error(`input ${JSON.stringify(desc.name)}: ${values.length} values, expected ${count}`);
  }
  const out = new Ctor(count);
  const big = desc.dataType === "int64" || desc.dataType === "uint64";
  const halfBits = desc.dataType === "float16" && Ctor === Uint16Array;
  for (let i = 0; i < count; i++) {
    const v = values[i];
    out[i] = big ? BigInt(v) : halfBits ? toHalfBits(Number(v)) : Number(v);
  }
  return out;
}

function randomValues(desc) {
  const count = desc.shape.reduce((a, b) => a * b, 1);
  const floating = desc.dataType.startsWith("float");
  return Array.from({length: count}, () =>
    floating ? Math.random() * 2 - 1 : Math.floor(Math.random() * 10));
}

function preview(desc, array) {
  const halfBits = desc.dataType === "float16" && array instanceof Uint16Array;
  const first = Array.from(array.subarray(0, 8), (v) => {
    if (!halfBits) return String(v);
    const s = v & 0x8000 ? -1 : 1, e = (v >>> 10) & 0x1f, m = v & 0x3ff;
    const value = e === 0 ? s * m * 2 ** -24 : e === 31 ? (m ? NaN : s * Infinity)
      : s * (1 + m / 1024) * 2 ** (e - 15);
    return String(value);
  });
  const type = desc.sourceDataType ?? desc.dataType;
  return `${type}[${desc.shape.join(", ")}] first values: ${first.join(", ")}` +
    (array.length > 8 ? ", ..." : "");
}

async function main() {
  if (globalThis.location?.protocol === "file:") {
    status("This page was opened from a file:// URL, where browsers block module scripts " +
           "and fetch() of the weights file. Serve this folder over HTTP: run " +
           "`python3 -m http.server` in it and open " +
           `http://localhost:8000/${PAGE_FILE}`, true);
    return;
  }
  let mod;
  try {
    mod = await import(new URL(MODULE_URL, document.baseURI));
  } catch (e) {
    status(`Could not load the model module: ${e}. Serve this folder over HTTP.`, true);
    return;
  }
  document.title = `WebNN: ${mod.GRAPH_NAME}`;
  $("title").textContent = `WebNN model: ${mod.GRAPH_NAME}`;
  if (!globalThis.navigator || !navigator.ml) {
    status("WebNN is not available in this browser (navigator.ml is missing). Use a browser " +
           "with WebNN enabled, e.g. Chrome or Edge with the WebNN flag " +
           "(chrome://flags/#web-machine-learning-neural-network, or start it with " +
           "--enable-features=WebMachineLearningNeuralNetwork).", true);
    return;
  }
  $("file").addEventListener("change", async () => {
    const file = $("file").files[0];
    if (file) $("inputs").value = await file.text();
  });
  let weights;
  try {
    const t = performance.now();
    weights = await mod.loadWeights(new URL(WEIGHTS_URL, document.baseURI));
    ms("t-weights", performance.now() - t);
  } catch (e) {
    status(`Could not load the weights: ${e}`, true);
    return;
  }
  status("Ready.");
  $("help").open = false;  // served correctly: the instructions can fold away
  $("run").disabled = false;
  settleReady({ok: true});
  $("controls").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("run").disabled = true;
    $("log").textContent = "";
    try {
      await run(mod, weights);
    } catch (e) {
      status(`Error: ${e}`, true);
    } finally {
      $("run").disabled = false;
    }
  });
}

let previous = null;

async function run(mod, weights) {
  const text = $("inputs").value.trim();
  const given = text ? JSON.parse(text) : {};
  if (typeof given !== "object" || given === null || Array.isArray(given)) {
    throw new Error("inputs JSON must be an object of input name to values");
  }
  status("Creating the WebNN context...");
  let t = performance.now();
  const power = $("power").value;
  let context;
  try {
    context = await navigator.ml.createContext({powerPreference: power});
  } catch (e) {
    throw new Error(`WebNN could not create a context with power preference "${power}" ` +
                    `(${e}): this browser's WebNN may not have such a device; try "default".`);
  }
  ms("t-context", performance.now() - t);
  status("Building the graph...");
  t = performance.now();
  let model;
  try {
    previous?.destroy();  // a new run (maybe another power preference): a new model
    previous = model = await mod.createModel(context, weights);
  } catch (e) {
    throw new Error(`the browser's WebNN could not build the graph: ${e} (what it supports: ` +
                    "context.opSupportLimits())");
  }
  const build = performance.now() - t;
  ms("t-build", build);
  log(`build: ${build.toFixed(1)} ms`);
  // an input the converter narrowed for its target (desc.sourceDataType) takes its values
  // as given: the module's compute() converts and range-checks them
  const feeds = Object.fromEntries(mod.INPUTS.map((desc) => {
    const values = Object.hasOwn(given, desc.name) ? [given[desc.name]].flat(Infinity)
      : randomValues(desc);
    return [desc.name, desc.sourceDataType ? values : fillTyped(desc, values)];
  }));
  status("Running...");
  t = performance.now();
  const results = await model.compute(feeds);
  const first = performance.now() - t;
  ms("t-first", first);
  log(`first run (write + dispatch + read): ${first.toFixed(2)} ms`);
  const runs = Math.max(1, Math.min(1000, Number($("runs").value) || 1));
  t = performance.now();
  for (let i = 0; i < runs; i++) await model.compute(feeds);
  const average = (performance.now() - t) / runs;
  $("t-average").textContent = `${average.toFixed(2)} ms (${runs} runs)`;
  log(`average of ${runs} runs: ${average.toFixed(2)} ms`);
  for (const desc of mod.OUTPUTS) {
    log(`${JSON.stringify(desc.name)}: ${preview(desc, results[desc.name])}`);
  }
  settleResult({ok: true, timings: {build, first, average},
                outputs: Object.fromEntries(mod.OUTPUTS.map((desc) => [desc.name,
                  {dataType: desc.sourceDataType ?? desc.dataType, shape: desc.shape,
                   buffer: results[desc.name].buffer}]))});
  status("Done.");
}

main();
</script>
</body>
</html>
""".replace("__STATUS__", PAGE_STATUS).replace("__HOOKS__", PAGE_HOOKS)


def _io_table(items: Iterable[tuple[str, str, Sequence[int] | None]]) -> str:
    rows = [f"<tr><td><code>{html_literal(name)}</code></td><td>{html_literal(dtype)}</td>"
            + ("<td>data-dependent (host steps)</td></tr>" if shape is None else
               f"<td>[{', '.join(str(int(d)) for d in shape)}]</td></tr>")
            for name, dtype, shape in items]
    if not rows:
        return "<p>(none)</p>"
    return ("<table>\n<tr><th>Name</th><th>Data type</th><th>Shape</th></tr>\n"
            + "\n".join(rows) + "\n</table>")


def html_text(module_file: str, weights_file: str, *, page_file: str | None = None,
              name: str = "", inputs: Iterable[tuple[str, str, Sequence[int]]] = (),
              outputs: Iterable[tuple[str, str, Sequence[int] | None]] = (),
              host: bool = False) -> str:
    """The runner page. File names go into the script as escaped string literals only
    (`js_string`); the graph name, file names and the `(name, data type, shape)` rows of
    `inputs` / `outputs` go into the markup through `html_literal` (shape None: a host-step
    output, "data-dependent"). `page_file` is the page's own file name (default: the
    module's stem + `.html`), used in the serving instructions. `host`: the module runs host
    steps; the page reads each output's shape from `computeTensors()` (HOST_RESULTS)."""
    if page_file is None:
        page_file = module_file.rsplit(".", 1)[0] + ".html"
    replacements = {
        "__MODULE__": js_string("./" + module_file),
        "__WEIGHTS__": js_string("./" + weights_file),
        "__PAGE_JS__": js_string(page_file),
        "__NAME__": html_literal(name),
        "__PAGE__": html_literal(page_file),
        "__MODULE_FILE__": html_literal(module_file),
        "__WEIGHTS_FILE__": html_literal(weights_file),
        "__INPUTS__": _io_table(inputs),
        "__OUTPUTS__": _io_table(outputs),
    }
    page = _HTML
    if host:
        for plain, with_host in _HOST_RESULTS:
            assert plain in page
            page = page.replace(plain, with_host)
    return re.sub("|".join(re.escape(k) for k in replacements),
                  lambda m: replacements[m.group(0)], page)


_HOST_RESULTS = (
    ("  const results = await model.compute(feeds);\n",
     "  // host steps: outputs with data-dependent shapes, read from computeTensors()\n"
     "  const tensors = await model.computeTensors(feeds);\n"
     "  const results = Object.fromEntries(mod.OUTPUTS.map((d) => [d.name, tensors[d.name].data]));\n"
     "  const outputs = mod.OUTPUTS.map((d) => ({name: d.name, dataType: tensors[d.name].dataType,\n"
     "                                          shape: tensors[d.name].shape}));\n"),
    ("  for (const desc of mod.OUTPUTS) {", "  for (const desc of outputs) {"),
    ("outputs: Object.fromEntries(mod.OUTPUTS.map(", "outputs: Object.fromEntries(outputs.map("),
)
"""The page script's lines that differ for a module with host steps (plain, with host)."""
