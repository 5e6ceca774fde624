// The page half of benchmarks/browser_peers.py: runs one model on our generated module and on
// the peers (onnxruntime-web with its WebNN or WASM execution provider, LiteRT.js on the CPU)
// and exposes the outcome as globalThis.__webnnResult (benchmark_page.js).
//
// Query parameters:
//   config=URL     the model's config.json (written by browser_peers.py): {inputs, ours:
//                  {variant: module URL}, onnx?, tflite?, freeDims}
//   mode=cold      run=NAME: time from the runtime's first line of script to its first
//                  outputs (load the runtime or module, fetch the weights or model, build,
//                  one compute) in this fresh page; report the resources fetched meanwhile
//   mode=steady    runs=NAME,NAME,...: load every runtime, `warmup` untimed runs each, then
//                  `rounds` rounds in which each runs once (a batch of runs when it is fast,
//                  see MIN_SAMPLE_MS), interleaved (the order rotating every round); report
//                  every time (per inference) and each runtime's last outputs
//   threads=N      wasm threads for the peers (0: as many as the page can use:
//                  navigator.hardwareConcurrency when crossOriginIsolated, else 1)
// Ours loads as the generated module's comment says an application should: createModel(context)
// fetches the weights itself and builds the graph while they download.
// An inference is what an application awaits: typed arrays in, typed arrays out (ours:
// model.compute(feeds); onnxruntime-web: session.run(tensors) and the outputs' data;
// LiteRT.js: model.run(tensors) and every output's toTypedArray()).

import {getJson, importOrt, interleave, params, resourcesSince, runPage} from "./benchmark_page.js";

const ARRAYS = {float32: Float32Array, int32: Int32Array, int64: BigInt64Array,
  uint8: Uint8Array, int8: Int8Array, uint32: Uint32Array};

function bytesOf(base64) {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

// {name: {dataType, shape, data: typed array}} from the wire format of browser_peers.py
async function loadFeeds(url) {
  const given = await getJson(url);
  return Object.fromEntries(Object.entries(given).map(([name, v]) => [name,
    {dataType: v.dataType, shape: v.shape, data: new ARRAYS[v.dataType](bytesOf(v.base64).buffer)}]));
}

async function ours(moduleUrl, feeds) {
  const mod = await import(new URL(moduleUrl, location.href));
  const context = await navigator.ml.createContext();
  const model = await mod.createModel(context);  // streams the weights: constants as they arrive
  const inputs = Object.fromEntries(mod.INPUTS.map((d) => [d.name, feeds[d.name].data]));
  return {run: () => model.compute(inputs)};
}

async function onnxruntime(provider, config, feeds, threads) {
  const {ort, executionProviders} = await importOrt(provider, threads);
  const session = await ort.InferenceSession.create(config.onnx, {
    executionProviders, freeDimensionOverrides: config.freeDims ?? {}});
  const tensors = Object.fromEntries(session.inputNames.map((name) => [name,
    new ort.Tensor(feeds[name].dataType, feeds[name].data, feeds[name].shape)]));
  return {
    async run() {
      const out = await session.run(tensors);
      return Object.fromEntries(Object.entries(out).map(([name, t]) => [name, t.data]));
    },
  };
}

async function litert(config, feeds, threads) {
  const lrt = await import(new URL("/litert/core/index.js", location.href));
  await lrt.loadLiteRt(new URL("/litert/wasm/", location.href).href, {threads: threads > 1});
  const model = await lrt.loadAndCompile(config.tflite,
    {accelerator: "wasm", cpuOptions: {numThreads: threads}});
  const given = Object.values(feeds);
  const inputs = model.getInputDetails().map((d, i) => {
    const feed = feeds[d.name] ?? given[i];
    return new lrt.Tensor(feed.data, Array.from(d.shape));
  });
  const names = model.getOutputDetails().map((d) => d.name);
  return {
    async run() {
      const out = await model.run(inputs);
      return Object.fromEntries(out.map((t, i) => {
        const data = t.toTypedArray();
        t.delete();
        return [names[i], data];
      }));
    },
  };
}

function runtime(name, config, feeds, threads) {
  if (name.startsWith("ours-")) return ours(config.ours[name.slice(5)], feeds);
  if (name === "ort-webnn") return onnxruntime("webnn", config, feeds, threads);
  if (name === "ort-wasm") return onnxruntime("wasm", config, feeds, threads);
  if (name === "litert") return litert(config, feeds, threads);
  throw new Error(`unknown runtime ${name}`);
}

// performance.now() is coarsened to 0.1 ms in a page that is not cross-origin isolated: a
// steady-state sample of a runtime faster than MIN_SAMPLE_MS is the mean of `batch`
// consecutive inferences (at most MAX_BATCH), `batch` set from the warm-up runs.
const MIN_SAMPLE_MS = 5;
const MAX_BATCH = 50;

async function cold(config, feeds, name, threads) {
  const start = performance.now();
  const loaded = await runtime(name, config, feeds, threads);
  const outputs = await loaded.run();
  const firstMs = performance.now() - start;
  return {firstMs, outputs, resources: resourcesSince(start)};
}

async function steady(config, feeds, names, threads) {
  const warmup = Number(params.get("warmup") || 3);
  const rounds = Number(params.get("rounds") || 30);
  async function load(name) {
    const loaded = await runtime(name, config, feeds, threads);
    const start = performance.now();
    for (let i = 0; i < warmup; i++) await loaded.run();
    const each = (performance.now() - start) / Math.max(warmup, 1);
    const batch = Math.min(MAX_BATCH, Math.max(1, Math.ceil(MIN_SAMPLE_MS / Math.max(each, 0.01))));
    return {runtime: loaded, record: {ok: true, times: [], batch}};
  }
  async function measure(loaded, record) {
    let outputs;
    const start = performance.now();
    for (let i = 0; i < record.batch; i++) outputs = await loaded.run();
    record.times.push((performance.now() - start) / record.batch);
    record.outputs = outputs;
  }
  return interleave(names, rounds, load, measure);
}

runPage(async (config, threads) => {
  const feeds = await loadFeeds(config.inputs);
  if (params.get("mode") === "cold") return cold(config, feeds, params.get("run"), threads);
  return {runtimes: await steady(config, feeds, params.get("runs").split(","), threads)};
});
