"""Native WebNN lstm / gru / lstmCell / gruCell against their composition from primitives
(rule `compose-recurrent`: the input projection of every step in one gemm split into the
steps, then per step a gemm, one split of the gates and the elementwise gates;
`converter.core.webnn.decompose_recurrent`) in the real headless Chromium of
`converter.validate.browser` (CPU: LiteRT/XNNPACK).

    python benchmarks/browser_recurrent.py [--quick] [--builds N] [--rounds N] [--floor]
        [--only SUBSTRING ...] [--json PATH] [--markdown PATH]

`--floor` measures the composition against its recurrent gemms alone instead of the native
operator (`floor_graph`: per layer and direction, the steps' h·Rᵀ gemms chained through a
slice, the part of the work no composition removes: each step needs the previous one's
state); the ratio composed / floor then says how much of the composition's time the rest
(input projection, gates, dispatch) costs, and the error columns are left empty.

For every size of the grid (`grid()`: sequence length x hidden size x batch x directions x
layers, LSTM and GRU, and the two cells) the same random-weight graph is built twice, native
and composed, exported as JavaScript (the module `webnn-convert convert --format js` writes)
and loaded by one page (`PAGE`), twice (one job each: a job must end within the harness'
180 s DevTools call limit). Interleaved and in alternating order, the first load times
`buildGraph()` (the MLGraphBuilder calls plus `build()`: after one untimed build of each,
`--builds` times each, fewer once the builds took 20 s; a first build over 10 s is the one
sample); the second, after warm-up runs, `--rounds` samples of the module's `compute()` on
the same inputs (write, dispatch, read back; a sample is the mean of enough calls for the
faster variant to take about 5 ms, as the page's clock ticks in 0.1 ms). Reported per size:
median build and compute milliseconds of each, the ratios composed / native (below 1:
composed is faster), and the largest absolute difference of each variant's outputs from the
reference runtime (float64 numpy) on the same inputs.

Input size equals the hidden size; weights ~ N(0, 1/sqrt(hidden)); every gate bias present
(bias and recurrentBias); LSTM and GRU return the sequence; two layers feed the first's
sequence ([steps, directions, batch, hidden] transposed to [steps, batch, directions·hidden])
to the second. Sizes are run in groups of one browser session each (the browser restarts
between groups). Timings on a loaded machine are noisy: read the ratios, not the
milliseconds.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import functools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from converter.core.webnn import ML, MLGraph, MLGraphBuilder, MLOperand
from converter.io.export.exporter import export
from converter.passes.targets import Target, load_target
from converter.passes.targets.passes import lower
from converter.validate.browser import PageServer, ensure_browser, run_jobs
from converter.validate.browser_setup import failure

RECURRENT = ("lstm", "gru", "lstmCell", "gruCell")
GATES = {"lstm": 4, "gru": 3, "lstmCell": 4, "gruCell": 3}

PAGE = """<!doctype html>
<meta charset="utf-8">
<title>native vs composed recurrent</title>
<script type="module">
// ?case=DIR&part=build|compute&builds=N&rounds=N: DIR/native/model.js and
// DIR/composed/model.js (generated modules), DIR/inputs.json ({name: base64 float32
// little-endian}). Builds and computes are separate page loads (jobs): one job must end
// within the harness' DevTools call limit (180 s), and a native lstm of 512 steps takes a
// minute to build.
const params = new URLSearchParams(location.search);
const dir = params.get("case");
const part = params.get("part");
const builds = Number(params.get("builds"));
const rounds = Number(params.get("rounds"));
const WARMUP = 3;
const b64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0)).buffer;
const VARIANTS = ["native", "composed"];

globalThis.__webnnResult = (async () => {
  const result = {ok: false, stage: "load", build: {native: [], composed: []},
                  compute: {native: [], composed: []}, outputs: {}};
  try {
    const context = await navigator.ml.createContext();
    const mods = {}, weights = {}, models = {};
    for (const v of VARIANTS) {
      mods[v] = await import(`./${dir}/${v}/model.js`);
      weights[v] = await mods[v].loadWeights();
    }
    const given = await (await fetch(`./${dir}/inputs.json`)).json();
    const feeds = Object.fromEntries(Object.entries(given).map(
      ([name, text]) => [name, new Float32Array(b64(text))]));
    const build = async (v) => {
      const t = performance.now();
      (await mods[v].buildGraph(context, weights[v])).destroy();
      return performance.now() - t;
    };
    if (part === "build") {
      result.stage = "build";
      // one untimed build of each first; a build over 10 s is its own sample (the
      // first-build costs are nothing next to it) and the only one
      const first = {};
      for (const v of VARIANTS) first[v] = await build(v);
      if (Math.max(first.native, first.composed) > 10000) {
        for (const v of VARIANTS) result.build[v].push(first[v]);
      }
      const started = performance.now();
      for (let i = 0; i < builds && !result.build.native.length &&
           (i === 0 || performance.now() - started < 20000); i++) {
        for (const v of i % 2 ? [...VARIANTS].reverse() : VARIANTS) {
          result.build[v].push(await build(v));
        }
      }
      result.ok = true;
      result.stage = "done";
      return result;
    }
    result.stage = "compute";
    for (const v of VARIANTS) {
      models[v] = await mods[v].createModel(context, weights[v]);
      const first = await models[v].compute(feeds);
      result.outputs[v] = Object.fromEntries(Object.entries(first).map(([k, a]) => [k, a.buffer]));
      for (let i = 1; i < WARMUP; i++) await models[v].compute(feeds);
    }
    // performance.now() is coarse (0.1 ms here): a sample times `reps` computes, enough
    // for the faster variant to take about 5 ms, and reports their mean
    const once = [];
    for (const v of VARIANTS) {
      const t = performance.now();
      for (let i = 0; i < 10; i++) await models[v].compute(feeds);
      once.push((performance.now() - t) / 10);
    }
    const reps = Math.max(1, Math.min(1000, Math.round(5 / Math.max(0.01, Math.min(...once)))));
    result.reps = reps;
    for (let i = 0; i < rounds; i++) {
      for (const v of i % 2 ? [...VARIANTS].reverse() : VARIANTS) {
        const t = performance.now();
        for (let r = 0; r < reps; r++) await models[v].compute(feeds);
        result.compute[v].push((performance.now() - t) / reps);
      }
    }
    for (const v of VARIANTS) models[v].destroy();
    result.ok = true;
    result.stage = "done";
  } catch (e) {
    result.error = `${e?.name ?? "Error"}: ${e?.message ?? e}`;
  }
  return result;
})();
</script>
"""


@dataclass(frozen=True)
class Size:
    """One benchmarked graph: `op` (lstm, gru, lstmCell, gruCell), sequence length `steps`
    (1 for the cells), `hidden` size (= input size), `batch`, `directions` (1 forward,
    2 both) and `layers` (stacked networks; 1 for the cells)."""

    op: str
    steps: int
    hidden: int
    batch: int = 1
    directions: int = 1
    layers: int = 1

    @property
    def label(self) -> str:
        text = f"{self.op} steps={self.steps} hidden={self.hidden} batch={self.batch}"
        if self.directions == 2:
            text += " bidirectional"
        return text + (f" layers={self.layers}" if self.layers > 1 else "")

    @property
    def work(self) -> int:
        """Multiply-adds of the recurrent matmuls, the part the steps serialize:
        steps·directions·layers·batch·gates·hidden²."""
        return (self.steps * self.directions * self.layers * self.batch * GATES[self.op]
                * self.hidden * self.hidden)


def grid(quick: bool = False) -> list[Size]:
    """The sizes measured: LSTM and GRU over steps 1/8/32/128 x hidden 16/64/256 (batch 1,
    forward, one layer), then 512 steps, bidirectional, two-layer and batch-4 variants at a
    few sizes, then the cells at hidden 16/64/256. `quick`: two small sizes."""
    if quick:
        return [Size("lstm", 4, 16), Size("gruCell", 1, 16)]
    sizes = [Size(op, s, h) for op in ("lstm", "gru") for s in (1, 8, 32, 128)
             for h in (16, 64, 256)]
    for op in ("lstm", "gru"):
        sizes += [Size(op, 512, 64), Size(op, 32, 64, directions=2),
                  Size(op, 128, 256, directions=2), Size(op, 32, 256, layers=2, directions=2),
                  Size(op, 32, 64, batch=4)]
    sizes += [Size(op, 1, h) for op in ("lstmCell", "gruCell") for h in (16, 64, 256)]
    return sizes


def make_graph(size: Size, seed: int = 0) -> tuple[MLGraph, dict[str, np.ndarray]]:
    """The native graph of `size` (reference context) and random float32 inputs for it."""
    rng = np.random.default_rng(seed)
    b = MLGraphBuilder(ML().create_context())
    h, g, d = size.hidden, GATES[size.op], size.directions

    def weight(*shape: int) -> MLOperand:
        return b.constant((rng.normal(size=shape) / np.sqrt(h)).astype(np.float32))

    def data(*shape: int) -> np.ndarray:
        return rng.normal(size=shape).astype(np.float32)

    if size.op in ("lstmCell", "gruCell"):
        x = b.input("x", shape=[size.batch, h], data_type="float32")
        state = b.input("h0", shape=[size.batch, h], data_type="float32")
        feeds = {"x": data(size.batch, h), "h0": data(size.batch, h)}
        if size.op == "gruCell":
            out = b.gru_cell(x, weight(g * h, h), weight(g * h, h), state, h,
                             bias=weight(g * h), recurrent_bias=weight(g * h))
            return b.build({"h": out}), feeds
        cell = b.input("c0", shape=[size.batch, h], data_type="float32")
        feeds["c0"] = data(size.batch, h)
        hid, new_cell = b.lstm_cell(x, weight(g * h, h), weight(g * h, h), state, cell, h,
                                    bias=weight(g * h), recurrent_bias=weight(g * h))
        return b.build({"h": hid, "c": new_cell}), feeds
    x = b.input("x", shape=[size.steps, size.batch, h], data_type="float32")
    direction = "both" if d == 2 else "forward"
    fn = b.lstm if size.op == "lstm" else b.gru
    layer_in, width = x, h
    outs: list[MLOperand] = []
    for _ in range(size.layers):
        outs = fn(layer_in, weight(d, g * h, width), weight(d, g * h, h), size.steps, h,
                  bias=weight(d, g * h), recurrent_bias=weight(d, g * h),
                  return_sequence=True, direction=direction)
        seq = b.transpose(outs[-1], permutation=[0, 2, 1, 3])
        layer_in, width = b.reshape(seq, [size.steps, size.batch, d * h]), d * h
    return b.build({"h": outs[0], "y": outs[-1]}), {"x": data(size.steps, size.batch, h)}


@functools.cache
def _without_recurrent() -> Target:
    """The chromium-tflite target with the recurrent operators taken out of its limits and
    rule compose-recurrent as its only rule (read once)."""
    target = load_target("chromium-tflite")
    limits = {k: v for k, v in target.limits.items() if k not in RECURRENT}
    return dataclasses.replace(target, limits=limits, rules=("compose-recurrent",))


def floor_graph(size: Size, seed: int = 1) -> MLGraph:
    """The recurrent gemms of `size`'s composition alone: per layer and direction one
    [G·H, H] weight and, per step, h = slice(gemm(h, weight, bTranspose), first H columns),
    starting from the first step of the input (same input as `make_graph`); the chains'
    final states concatenated are the output."""
    rng = np.random.default_rng(seed)
    b = MLGraphBuilder(ML().create_context())
    h, g = size.hidden, GATES[size.op]
    x = b.input("x", shape=[size.steps, size.batch, h], data_type="float32")
    start = b.reshape(b.slice(x, [0, 0, 0], [1, size.batch, h]), [size.batch, h])
    finals = []
    for _ in range(size.layers * size.directions):
        weight = b.constant((rng.normal(size=(g * h, h)) / np.sqrt(h)).astype(np.float32))
        state = start
        for _ in range(size.steps):
            state = b.slice(b.gemm(state, weight, b_transpose=True), [0, 0], [size.batch, h])
        finals.append(state)
    return b.build({"h": finals[0] if len(finals) == 1 else b.concat(finals, 0)})


def composed(graph: MLGraph) -> MLGraph:
    """`graph` with every recurrent operator composed by rule compose-recurrent, as for a
    target that lacks them."""
    lowered = lower(graph, _without_recurrent(), only=["compose-recurrent"])
    assert not {o.op for o in lowered.graph.operations} & set(RECURRENT), "not composed"
    return lowered.graph


def _decode(outputs: dict[str, Any]) -> dict[str, np.ndarray]:
    return {k: np.frombuffer(base64.b64decode(v["$base64"]), dtype="<f4")
            for k, v in outputs.items()}


def _error(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> float:
    return max(float(np.max(np.abs(got[k].astype(np.float64) -
                                   np.asarray(want[k], np.float64).ravel())))
               for k in want)


def measure(sizes: Sequence[Size], builds: int, rounds: int, timeout_s: float = 600.0,
            floor: bool = False) -> list[dict[str, Any]]:
    """One browser session over `sizes`: a row per size (see the module docstring); with
    `floor`, the "native" variant is `floor_graph` (no errors reported)."""
    setup = ensure_browser()
    refs = []
    with tempfile.TemporaryDirectory(prefix="webnn-recurrent-") as root:
        (Path(root) / "bench.html").write_text(PAGE, encoding="utf-8")
        jobs: list[dict[str, Any]] = []
        for i, size in enumerate(sizes):
            graph, feeds = make_graph(size)
            refs.append(graph.context.compute(graph, dict(feeds)))
            first = floor_graph(size) if floor else graph
            for name, variant in (("native", first), ("composed", composed(graph))):
                export(variant, Path(root) / f"c{i}" / name, format="js", stem="model")
            (Path(root) / f"c{i}" / "inputs.json").write_text(json.dumps(
                {k: base64.b64encode(v.astype("<f4").tobytes()).decode() for k, v in
                 feeds.items()}))
            for part in ("build", "compute"):
                jobs.append({"url": f"/bench.html?case=c{i}&part={part}&builds={builds}"
                                    f"&rounds={rounds}", "timeoutMs": int(timeout_s * 1000)})
        with PageServer(root) as server:
            for job in jobs:
                job["url"] = server.url(job["url"])
            answer = run_jobs(jobs, setup)
    rows = []
    results = answer.get("results") or []
    for i, (size, ref) in enumerate(zip(sizes, refs, strict=True)):
        row: dict[str, Any] = {"label": size.label, **dataclasses.asdict(size),
                               "work": size.work, "browser": answer.get("browser", "")}
        built, res = (results[2 * i:2 * i + 2] + [{}, {}])[:2]
        bad = [r for r in (built, res) if not r.get("ok")]
        if bad:
            row["error"] = failure(bad[0])
            rows.append(row)
            continue
        for kind, got in (("build", built), ("compute", res)):
            for v in ("native", "composed"):
                row[f"{kind}_{v}_ms"] = statistics.median(got[kind][v])
            row[f"{kind}_ratio"] = row[f"{kind}_composed_ms"] / row[f"{kind}_native_ms"]
        for v in ("native", "composed"):
            row[f"error_{v}"] = (float("nan") if floor and v == "native" else
                                 _error(_decode(res["outputs"][v]), ref))
        rows.append(row)
    return rows


def table(rows: Iterable[dict[str, Any]]) -> str:
    """The markdown table of `rows` (ratios: composed / native; below 1, composed is
    faster)."""
    lines = ["| graph | build native ms | build composed ms | build ratio | compute native ms "
             "| compute composed ms | compute ratio | max error native / composed |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['label']} | {r['error']} |||||||")
            continue
        lines.append(
            f"| {r['label']} | {r['build_native_ms']:.1f} | {r['build_composed_ms']:.1f} | "
            f"{r['build_ratio']:.2f} | {r['compute_native_ms']:.3f} | "
            f"{r['compute_composed_ms']:.3f} | {r['compute_ratio']:.2f} | "
            f"{r['error_native']:.1e} / {r['error_composed']:.1e} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smoke run: two small sizes")
    p.add_argument("--builds", type=int, default=5)
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--group", type=int, default=6, help="sizes per browser session")
    p.add_argument("--only", nargs="+", default=[], help="substrings of size labels")
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--markdown", type=Path, default=None)
    p.add_argument("--floor", action="store_true",
                   help="against the recurrent gemms alone instead of the native operator")
    args = p.parse_args(argv)
    sizes = [s for s in grid(args.quick) if not args.only or
             any(o in s.label for o in args.only)]
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    for k in range(0, len(sizes), args.group):
        got = measure(sizes[k:k + args.group], args.builds, args.rounds, floor=args.floor)
        for row in got:
            print(table([row]).splitlines()[-1], flush=True)
        rows += got
        if args.json:
            args.json.write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    text = table(rows)
    if args.floor:
        text = text.replace(" native", " gemms only")
    print(f"\n{text}\n({len(rows)} sizes, {time.perf_counter() - started:.0f} s)")
    if args.markdown:
        args.markdown.write_text(text + "\n")
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
