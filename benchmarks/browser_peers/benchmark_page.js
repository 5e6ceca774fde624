// What the benchmark pages share (bench.js of browser_peers.py, llm.js of browser_llm.py; both
// stage this file next to theirs): the query, the peers' thread count, onnxruntime-web's
// import, the cold page's resources, the interleaved steady-state rounds, and the page's
// outcome as globalThis.__webnnResult (awaited by harness/run_page.mjs).

export const params = new URLSearchParams(location.search);
export const message = (e) => `${e?.name ?? "Error"}: ${e?.message ?? e}`;

export async function getJson(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

/** threads=N, else (0) navigator.hardwareConcurrency when crossOriginIsolated, else 1. */
function pageThreads() {
  const asked = Number(params.get("threads") || 0);
  if (asked > 0) return asked;
  return globalThis.crossOriginIsolated ? navigator.hardwareConcurrency : 1;
}

/** onnxruntime-web (staged under /ort/) for `provider` "webnn" or "wasm", on `threads` wasm
 * threads, without the proxy worker; and the executionProviders option that picks it. */
export async function importOrt(provider, threads) {
  const file = provider === "webnn" ? "ort.min.mjs" : "ort.wasm.min.mjs";
  const ort = await import(new URL(`/ort/${file}`, location.href));
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.proxy = false;
  ort.env.wasm.wasmPaths = new URL("/ort/", location.href).href;
  const executionProviders = provider === "webnn" ? [{name: "webnn", deviceType: "cpu"}] : ["wasm"];
  return {ort, executionProviders};
}

/** The resources the page fetched from `start` (a performance.now()) on: {path, bytes}. */
export function resourcesSince(start) {
  return performance.getEntriesByType("resource")
    .filter((e) => e.startTime >= start)
    .map((e) => ({path: new URL(e.name).pathname, bytes: e.decodedBodySize}));
}

/** Every runtime of `names` loaded by `load(name)` (its untimed warm-up included), which
 * returns {runtime, record} (record: {ok: true, ...}); then `rounds` rounds in which
 * `measure(runtime, record)` runs once for each, interleaved (the order rotating every round).
 * A runtime that throws is left out from then on, its record {ok: false, error}. Returns
 * {name: record}. */
export async function interleave(names, rounds, load, measure) {
  const loaded = {};
  const results = {};
  for (const name of names) {
    try {
      const {runtime, record} = await load(name);
      loaded[name] = runtime;
      results[name] = record;
    } catch (e) {
      results[name] = {ok: false, error: message(e)};
    }
  }
  const order = Object.keys(loaded);
  for (let r = 0; r < rounds; r++) {
    const k = r % Math.max(order.length, 1);
    for (const name of [...order.slice(k), ...order.slice(0, k)]) {
      if (!results[name].ok) continue;
      try {
        await measure(loaded[name], results[name]);
      } catch (e) {
        results[name] = {ok: false, error: message(e)};
      }
    }
  }
  return results;
}

/** Runs `body(config, threads)` (config: the JSON at ?config=) and publishes
 * {ok, env, ...what body returned} or {ok: false, env, error} as globalThis.__webnnResult,
 * the status line saying which. */
export function runPage(body) {
  async function main() {
    const result = {ok: false, env: {}};
    try {
      const threads = pageThreads();
      result.env = {userAgent: navigator.userAgent, threads,
        crossOriginIsolated: Boolean(globalThis.crossOriginIsolated),
        hardwareConcurrency: navigator.hardwareConcurrency};
      const config = await getJson(params.get("config"));
      Object.assign(result, await body(config, threads));
      result.ok = true;
    } catch (e) {
      result.error = message(e);
    }
    return result;
  }
  globalThis.__webnnResult = main().then((r) => {
    document.getElementById("status").textContent = r.ok ? "Done." : `Error: ${r.error}`;
    return r;
  });
}
