"""The fixed JavaScript blocks of the exported ES module (`converter.io.export.javascript`,
whose docstring states the contract): loading the weights (streamed into one buffer of the
known size; `subarray(begin, end)` waits for those bytes), narrowing inputs and widening
outputs for targets without 64-bit integers, and `createModel` with its placeholders
(`__STATE_DOC__`, `__STATE_SETUP__`, `__INPUT_CHECK__`, `__FEED__`, `__RETURN__`,
`__RESULT__`, `__RESET__`) and the carried-state pieces that fill them."""

from __future__ import annotations

__all__ = ["CHECK", "CREATE_MODEL", "LOAD_WEIGHTS", "NARROW_INPUT", "NO_WEIGHTS", "STATE_CHECK", "STATE_DOC", "STATE_RETURN", "STATE_SETUP", "WIDEN_OUTPUT"]

LOAD_WEIGHTS = r"""
/**
 * Fetch the weights file (default: the one next to this module) into one buffer of its known
 * size. The promise resolves to those bytes once all __SIZE__ have arrived (a shorter or longer
 * file, or an HTTP error, rejects it); meanwhile `subarray(begin, end)` resolves to a view of
 * bytes [begin, end) as soon as they are there, so buildGraph creates each constant while the
 * rest downloads.
 */
export function loadWeights(url = new URL(WEIGHTS_FILE, import.meta.url)) {
  const bytes = new Uint8Array(__SIZE__), progress = new EventTarget();
  let received = 0;
  const loaded = (async () => {
    const response = await fetch(url);
    for await (const chunk of response.body ?? [new Uint8Array(await response.arrayBuffer())]) {
      if (received + chunk.length <= bytes.length) bytes.set(chunk, received);
      received += chunk.length;
      progress.dispatchEvent(new Event("progress"));
    }
    if (!response.ok || received !== bytes.length) throw new Error(`weights: ${url}: HTTP ${response.status}, ${received} of __SIZE__ bytes`);
  })().then(() => bytes);
  return Object.assign(loaded, {async subarray(begin, end) {
    while (received < end) await Promise.race([loaded, new Promise((resolve) => progress.addEventListener("progress", resolve, {once: true}))]);
    return bytes.subarray(begin, end);
  }});
}
"""

NO_WEIGHTS = """
/** This graph has no weights file: its constants are in the module. */
export async function loadWeights() { return null; }
"""

NARROW_INPUT = r"""
const NARROW_RANGES = {int32: [-(2n ** 31n), 2n ** 31n - 1n], uint32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n], uint64: [0n, 2n ** 64n - 1n]};

/**
 * The typed array to write for graph input `desc` (a row of INPUTS). An input the converter
 * narrowed from int64/uint64 for its target (`desc.sourceDataType`) takes a BigInt64Array /
 * BigUint64Array or an array of bigints, numbers or decimal strings; every value must fit
 * the graph's type (RangeError otherwise). An input carried in a wider integer type for its
 * target (int8 as int32) takes the source type's typed array. Other inputs come back unchanged.
 */
export function narrowInput(desc, values) {
  if (!desc.sourceDataType) return values;
  const name = JSON.stringify(desc.name);
  const count = desc.shape.reduce((a, b) => a * b, 1);
  if (values.length !== count) {
    throw new RangeError(`input ${name}: ${values.length} values, expected ${count}`);
  }
  const [lo, hi] = NARROW_RANGES[desc.dataType];
  const out = new ARRAYS[desc.dataType](count);
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
"""

WIDEN_OUTPUT = r"""
/**
 * Graph output `desc` (a row of OUTPUTS) as its source data type: `data` is what readTensor
 * gives (an ArrayBuffer) or a typed array; an output narrowed from int64/uint64 comes back as
 * a BigInt64Array / BigUint64Array, one carried in a wider type (int8 as int32) as the typed
 * array of its source type, others as the typed array of their data type.
 */
export function widenOutput(desc, data) {
  const array = ArrayBuffer.isView(data) ? data : new ARRAYS[desc.dataType](data);
  if (!desc.sourceDataType) return array;
  const big = desc.sourceDataType.endsWith("64");
  return ARRAYS[desc.sourceDataType].from(array, big ? (v) => BigInt(v) : (v) => v);
}
"""

CREATE_MODEL = r"""
/**
 * Build the graph on `context` (weights: loadWeights(), streamed, unless given) and create
 * its tensors meanwhile, once. compute(feeds) writes {input name: typed array}, runs the
 * graph and resolves to {output name: typed array}, reusing the same tensors on every call;
 * destroy() frees them.__STATE_DOC__
 */
export async function createModel(context, weights = loadWeights()) {
  const tensors = async (descs, usage) => Object.fromEntries(await Promise.all(descs.map(async (d) => [d.name, await context.createTensor({...d, ...usage})])));
  const [graph, inputTensors, outputTensors] = await Promise.all([buildGraph(context, weights),
    tensors(INPUTS, {writable: true}), tensors(OUTPUTS, {readable: true}), weights]);__STATE_SETUP__
  const compute = async (feeds) => {
    for (const d of INPUTS) {__INPUT_CHECK__
      context.writeTensor(inputTensors[d.name], __FEED__);
    }
    context.dispatch(graph, inputTensors, outputTensors);
    const read = await Promise.all(OUTPUTS.map((d) => context.readTensor(outputTensors[d.name])));
    __RETURN__
  };
  const destroy = () => [graph, ...Object.values(inputTensors), ...Object.values(outputTensors)].forEach((t) => t.destroy());
  return {inputs: INPUTS, outputs: OUTPUTS, compute, __RESET__destroy};
}
"""

CHECK = """
      if (!Object.hasOwn(feeds, d.name)) throw new TypeError(`compute: no value for input ${JSON.stringify(d.name)}`);"""
STATE_DOC = """
 * Carried state (STATE): an input of STATE that the feeds leave out gets the output of the
 * call before (its initial value first); resetState() starts over."""
STATE_SETUP = """
  const state = new Map();
  const resetState = () => { for (const s of STATE) state.set(s.input, s.initial()); };
  resetState();"""
STATE_CHECK = """
      const value = Object.hasOwn(feeds, d.name) ? feeds[d.name] : state.get(d.name);
      if (value === undefined) throw new TypeError(`compute: no value for input ${JSON.stringify(d.name)}`);"""
STATE_RETURN = """const outputs = Object.fromEntries(OUTPUTS.map((d, i) => [d.name, __RESULT__]));
    for (const s of STATE) state.set(s.input, outputs[s.output]);
    return outputs;"""
