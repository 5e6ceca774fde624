// The page half of benchmarks/browser_llm.py: greedy generation of one decoder by our
// generator module (`createGenerator` of `webnn-convert convert DECODER --format js`) and by
// onnxruntime-web (WebNN or WASM execution provider) on the original ONNX through the minimal
// loop below; the outcome is globalThis.__webnnResult (../browser_peers/benchmark_page.js,
// staged next to this file).
//
// Query parameters:
//   config=URL   the model's config.json (browser_llm.py): {prompt, ours, onnx, layout}
//   tokens=N     new tokens per generation
//   mode=cold    run=NAME: a fresh page; time from the runtime's first line of script to its
//                first generated token (import, fetch, build or create the session, prefill),
//                the tokens, and the resources fetched meanwhile
//   mode=steady  runs=NAME,...: load every runtime, `warmup` untimed generations each, then
//                `rounds` rounds of one generation each, interleaved (the order rotating);
//                per generation the time to the first token and from it to the last
//   threads=N    the peers' wasm threads (0: navigator.hardwareConcurrency when
//                crossOriginIsolated, else 1)
//   log=1        onnxruntime-web logs at "verbose" (to the console: which nodes each
//                execution provider takes); not for timing

import {importOrt, interleave, params, resourcesSince, runPage} from "./benchmark_page.js";

/** The largest value's index, ties to the lowest, NaN never chosen (as our generator). */
function argmax(row) {
  let best = -1, value = -Infinity;
  for (let i = 0; i < row.length; i++) {
    if (row[i] > value || (best < 0 && row[i] === value)) { best = i; value = row[i]; }
  }
  return Math.max(best, 0);
}

async function ours(config) {
  const mod = await import(new URL(config.ours, location.href));
  const context = await navigator.ml.createContext();
  const generator = await mod.createGenerator(context);
  return {
    generate: (prompt, n, onToken) => generator.generate(prompt, {maxNewTokens: n, onToken}),
  };
}

// onnxruntime-web on the original ONNX, one session, a minimal greedy loop feeding the present
// KV back as the past:
// - layout.cache "fixed" (a model that writes its cache in place: GroupQueryAttention):
//   static shapes (freeDimensionOverrides: one token, a KV buffer of maxLength rows, the mask
//   [1, maxLength] with ones on the rows in use), the prompt a token at a time; with WebNN the
//   present outputs stay WebNN tensors (preferredOutputLocation "ml-tensor") between steps;
// - "growing" (a model that appends: GPT-2): the prompt in one run after an empty past, then
//   one token per run, the past growing by a row each step (shapes change every step).
async function onnxruntime(provider, config, threads) {
  const {ort, executionProviders} = await importOrt(provider, threads);
  if (params.get("log")) ort.env.logLevel = "verbose";
  const layout = config.layout;
  const fixed = layout.cache === "fixed";
  const options = {executionProviders, freeDimensionOverrides: layout.freeDims};
  if (params.get("log")) options.logSeverityLevel = 0;
  if (fixed && provider === "webnn") {
    options.preferredOutputLocation = Object.fromEntries(
      layout.kv.map(([, present]) => [present, "ml-tensor"]));
  }
  const session = await ort.InferenceSession.create(config.onnx, options);
  const [heads, size] = layout.kvShape;
  const ints = (values) => BigInt64Array.from(values, BigInt);
  const emptyKv = (rows) => layout.kv.map(() => new ort.Tensor("float32",
    new Float32Array(heads * rows * size), [1, heads, rows, size]));

  async function step(ids, past, kv) {
    const total = fixed ? layout.maxLength : past + ids.length;
    const mask = new Array(total).fill(0).fill(1, 0, past + ids.length);
    const feeds = {
      [layout.inputIds]: new ort.Tensor("int64", ints(ids), [1, ids.length]),
      [layout.attentionMask]: new ort.Tensor("int64", ints(mask), [1, total])};
    if (layout.positionIds) {
      feeds[layout.positionIds] = new ort.Tensor("int64", ints(ids.map((_, i) => past + i)),
        [1, ids.length]);
    }
    layout.kv.forEach(([pastName], i) => { feeds[pastName] = kv[i]; });
    const out = await session.run(feeds);
    for (const t of kv) if (t.location !== "cpu") t.dispose();
    const logits = out[layout.logits].data;
    const vocab = logits.length / ids.length;
    return {row: logits.subarray((ids.length - 1) * vocab), kv: layout.kv.map(([, p]) => out[p])};
  }

  return {
    async generate(prompt, n, onToken) {
      let kv = emptyKv(fixed ? layout.maxLength : 0), past = 0, last;
      for (const chunk of fixed ? prompt.map((id) => [id]) : [prompt]) {
        ({row: last, kv} = await step(chunk, past, kv));
        past += chunk.length;
      }
      const tokens = [];
      for (;;) {
        const token = argmax(last);
        tokens.push(token);
        onToken(token, tokens.length - 1);
        if (tokens.length === n) break;
        ({row: last, kv} = await step([token], past, kv));
        past += 1;
      }
      for (const t of kv) if (t.location !== "cpu") t.dispose();
      return tokens;
    },
  };
}

function runtime(name, config, threads) {
  if (name === "ours") return ours(config);
  if (name === "ort-webnn") return onnxruntime("webnn", config, threads);
  if (name === "ort-wasm") return onnxruntime("wasm", config, threads);
  throw new Error(`unknown runtime ${name}`);
}

/** One generation: its tokens, ms to the first token, ms from the first to the last. */
async function timed(loaded, prompt, n, start) {
  const stamps = [];
  const tokens = await loaded.generate(prompt, n, () => { stamps.push(performance.now()); });
  return {tokens, firstMs: stamps[0] - start, decodeMs: stamps[stamps.length - 1] - stamps[0]};
}

async function cold(config, name, n, threads) {
  const start = performance.now();
  const loaded = await runtime(name, config, threads);
  const result = await timed(loaded, config.prompt, n, start);
  return {...result, resources: resourcesSince(start)};
}

async function steady(config, names, n, threads) {
  const warmup = Number(params.get("warmup") || 2);
  const rounds = Number(params.get("rounds") || 5);
  async function load(name) {
    const loaded = await runtime(name, config, threads);
    for (let i = 0; i < warmup; i++) await loaded.generate(config.prompt, n, () => {});
    return {runtime: loaded, record: {ok: true, firstMs: [], decodeMs: []}};
  }
  async function measure(loaded, record) {
    const one = await timed(loaded, config.prompt, n, performance.now());
    record.firstMs.push(one.firstMs);
    record.decodeMs.push(one.decodeMs);
    record.tokens = one.tokens;
  }
  return interleave(names, rounds, load, measure);
}

runPage(async (config, threads) => {
  const n = Number(params.get("tokens") || 32);
  if (params.get("mode") === "cold") return cold(config, params.get("run"), n, threads);
  return {runtimes: await steady(config, params.get("runs").split(","), n, threads)};
});
