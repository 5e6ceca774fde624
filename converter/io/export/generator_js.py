"""The JavaScript generation runtime of a decoder export: `<stem>.js` (the generator module),
`<stem>.decode.js` and `<stem>.prefill.js` (the step graphs, each a graph module of
`converter.io.export.javascript`), one `<stem>.weights` shared by both, and `<stem>.html`
(`converter.io.export.generator_page`).

```js
import {createGenerator} from "./model.js";
const generator = await createGenerator(await navigator.ml.createContext());
const ids = await generator.generate([414, 473, 246, 329], {maxNewTokens: 32,
  sampling: {topK: 40, temperature: 0.8, seed: 7}, onToken: (id) => console.log(id)});
generator.destroy();
```

`createGenerator(context, weights?, options?)` builds the decode graph (one token) and, unless
`options.prefill === false` or the export has none, the prefill graph (`PREFILL_CHUNK`
tokens): each holds its own copy of the constants in the browser, so leaving prefill out
halves the memory and feeds the prompt a token at a time. Both graphs read and write the KV
cache: MLTensors of [1, kv_heads, MAX_LENGTH, head_size] that stay on the context between
steps. `LAYOUT.cache` "in-place": the model writes the new rows where the attention mask
[1, MAX_LENGTH] (ones on the rows in use) says; two sets, swapped after each step (a
dispatch's inputs and outputs must differ). "sliding" (a model that appends to its cache,
`converter.validate.decoder_graphs`): the valid rows are the window's last ones, the mask is
[1, MAX_LENGTH + S], the step writes present tensors of MAX_LENGTH + S rows and a small
graph the generator builds (`slice`) copies their last MAX_LENGTH rows back into the window. A step reads back only
the logits, and only for the step whose token is chosen (the last prompt step, then every
decode step). The prompt runs in chunks of PREFILL_CHUNK tokens, the rest one token at a time
through the decode graph.

`generate(promptIds, {maxNewTokens = 16, eosTokenId, sampling = "greedy", onToken})` starts a
new sequence (the rows of a previous one are masked, never read), returns the generated ids
(the prompt excluded) and calls `onToken(id, index)` as each is chosen (its promise, if it
returns one, is awaited: a page can repaint). It stops after `maxNewTokens` or after an
`eosTokenId` (a number or an array of numbers). `sampling`: "greedy" (argmax, ties to the
lowest id) or `{topK, topP, temperature, seed}`, defined in docs/generation.md and
implemented by `chooseToken` / `Pcg32` / `fdlibmExp` (exported), the same algorithm as
`converter.validate.sampling`: the same seed and logits give the same tokens. `reset()`
writes zeros over the KV cache; `destroy()` releases the graphs and tensors.

Restrictions: batch 1; the prompt plus the new tokens must fit MAX_LENGTH (a RangeError says
so); one `generate()` at a time per generator. Model-provided names are emitted as
`js_string` literals only; file names are `check_stem`ed stems.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from converter.core.webnn import MLGraph
from converter.io.export.javascript import check_stem, module_text
from converter.io.export.literals import js_string
from converter.io.export.sampler_js import SAMPLER_JS
from converter.io.serialize.errors import WebnnExportError
from converter.io.serialize.plan import WebnnPlan, constant_bytes, plan
from converter.io.serialize.tables import WEIGHTS_HEADER_BYTES, WEIGHTS_MAGIC, WEIGHTS_VERSION

__all__ = ["GeneratorGraphs", "generator_text", "write_generator"]


@dataclass(frozen=True)
class GeneratorGraphs:
    """The step graphs of a decoder with a fixed-size KV buffer of `max_length` rows:
    `decode` takes one token, `prefill` (or None) `chunk` tokens; both take `input_ids`
    [1, S], `attention_mask`, `position_ids` [1, S] when the model has it, the `past` inputs
    [1, kv_heads, max_length, head_size] and give `logits` [1, S, vocab] and the `present`
    outputs. `cache` "in-place": the mask is [1, max_length] and the present has the past's
    shape (the new rows written where the mask says); "sliding": the valid rows are the
    window's last ones, the mask is [1, max_length + S] and the present has max_length + S
    rows, of which the generator keeps the last max_length (module docstring)."""

    decode: MLGraph
    prefill: MLGraph | None
    chunk: int
    max_length: int
    input_ids: str
    attention_mask: str
    position_ids: str | None
    past: tuple[str, ...]
    present: tuple[str, ...]
    logits: str
    name: str = "decoder"
    cache: str = "in-place"

    def __post_init__(self) -> None:
        if self.cache not in ("in-place", "sliding"):
            raise WebnnExportError(f"generator: cache {self.cache!r} is not 'in-place' or "
                                   "'sliding'")
        if self.cache == "sliding" and not self.position_ids:
            raise WebnnExportError("generator: a sliding KV window needs a position_ids input")
        for graph in (self.decode, self.prefill):
            if graph is None:
                continue
            needed = {self.input_ids, self.attention_mask, *self.past}
            if self.position_ids:
                needed.add(self.position_ids)
            missing = sorted(needed - set(graph.inputs)) + sorted(
                {self.logits, *self.present} - set(graph.outputs))
            if missing:
                raise WebnnExportError(f"generator: step graph lacks {missing}")
            seq = graph.inputs[self.input_ids].shape[-1] if self.cache == "sliding" else 0
            for p, q in zip(self.past, self.present, strict=True):
                want = list(graph.inputs[p].shape)
                want[2] += seq
                if list(graph.outputs[q].shape) != want:
                    how = "written in place" if self.cache == "in-place" else "the past + S"
                    raise WebnnExportError(f"generator: present {q!r} is not {how} (shape "
                                           f"{graph.outputs[q].shape}, past "
                                           f"{graph.inputs[p].shape})")


def _shared_plans(decode: MLGraph, prefill: MLGraph | None, name: str
                  ) -> tuple[WebnnPlan, WebnnPlan | None, list[bytes]]:
    """Plans of both graphs whose `weights` constants index one blob: the decode graph's
    constants, then the prefill graph's that hold other bytes (the same weights are stored
    once); the blob's chunks (header first)."""
    chunks = [WEIGHTS_MAGIC + WEIGHTS_VERSION.to_bytes(4, "little")]
    offsets: dict[bytes, int] = {}
    size = WEIGHTS_HEADER_BYTES
    plans: list[WebnnPlan] = []
    for graph in (decode, prefill):
        if graph is None:
            continue
        p = plan(graph, name)
        entries = []
        for c in p.constants:
            if c.kind != "weights":
                entries.append(c)
                continue
            data = constant_bytes(c.operand)
            key = hashlib.sha256(data).digest() + len(data).to_bytes(8, "little")
            if key not in offsets:
                offsets[key] = size
                chunks.append(data)
                size += len(data)
            entries.append(dataclasses.replace(c, offset=offsets[key]))
        plans.append(dataclasses.replace(p, constants=tuple(entries)))
    plans = [dataclasses.replace(p, weights_size=size) for p in plans]
    return plans[0], (plans[1] if len(plans) > 1 else None), chunks


def generator_text(g: GeneratorGraphs, stem: str) -> str:
    """The generator module `<stem>.js` (module docstring)."""
    check_stem(stem)
    kv = "".join(f"\n    [{js_string(p)}, {js_string(q)}],"
                 for p, q in zip(g.past, g.present, strict=True))
    prefill = (f'import * as prefillGraph from "./{stem}.prefill.js";'
               if g.prefill is not None else "const prefillGraph = null;")
    head = "\n".join([
        "// Generated by webnn-converter: a token generation loop over the decoder's WebNN "
        "graphs.",
        "//   const generator = await createGenerator(await navigator.ml.createContext());",
        "//   const ids = await generator.generate([1, 2, 3], {maxNewTokens: 16, onToken: "
        "console.log});",
        f'import * as decodeGraph from "./{stem}.decode.js";',
        prefill,
        "",
        f"export const GRAPH_NAME = {js_string(g.name)};",
        f"export const MAX_LENGTH = {int(g.max_length)};",
        f"export const PREFILL_CHUNK = {int(g.chunk) if g.prefill is not None else 0};",
        f"export const LAYOUT = {{inputIds: {js_string(g.input_ids)}, "
        f"attentionMask: {js_string(g.attention_mask)},",
        f"  positionIds: {js_string(g.position_ids) if g.position_ids else 'null'}, "
        f"logits: {js_string(g.logits)},",
        f"  cache: {js_string(g.cache)}, kv: [{kv}\n  ]}};",
        "export const loadWeights = decodeGraph.loadWeights;",
    ])
    return head + _RUNTIME + SAMPLER_JS


_RUNTIME = r"""

const ARRAYS = {float32: Float32Array, float16: globalThis.Float16Array ?? Uint16Array,
  int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
  int8: Int8Array, uint8: Uint8Array};

/** A typed array of `desc`'s data type holding the integers `values`. */
function integers(desc, values) {
  const array = new ARRAYS[desc.dataType](values.length);
  const big = desc.dataType.endsWith("64");
  for (let i = 0; i < values.length; i++) array[i] = big ? BigInt(values[i]) : values[i];
  return array;
}

/** binary16 bits -> number (for browsers without Float16Array). */
function halfToNumber(bits) {
  const exponent = (bits >> 10) & 0x1f, fraction = bits & 0x3ff, sign = bits & 0x8000 ? -1 : 1;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

/** One step graph: its tensors for the token ids, mask and positions, and its logits. */
async function createStep(context, module, weights) {
  const graph = await module.buildGraph(context, weights);
  const desc = Object.fromEntries([...module.INPUTS, ...module.OUTPUTS].map((d) => [d.name, d]));
  const tensor = (d, usage) => context.createTensor({dataType: d.dataType, shape: d.shape, ...usage});
  const names = [LAYOUT.inputIds, LAYOUT.attentionMask, LAYOUT.positionIds].filter((n) => n);
  const inputs = Object.fromEntries(await Promise.all(
    names.map(async (n) => [n, await tensor(desc[n], {writable: true})])));
  const logits = await tensor(desc[LAYOUT.logits], {readable: true});
  const [, size, vocab] = desc[LAYOUT.logits].shape;
  const step = {graph, desc, inputs, logits, size, vocab, present: null, shift: null};
  if (LAYOUT.cache === "sliding") {
    // the present KV has the window's rows + `size`; a small graph keeps the last window rows
    step.present = await Promise.all(LAYOUT.kv.map(([, name]) => tensor(desc[name], {})));
    const builder = new MLGraphBuilder(context);
    const kept = {};
    LAYOUT.kv.forEach(([pastName, presentName], i) => {
      const d = desc[presentName];
      const rows = builder.input(`kv${i}`, {dataType: d.dataType, shape: d.shape});
      kept[`kv${i}`] = builder.slice(rows, [0, 0, size, 0], desc[pastName].shape);
    });
    step.shift = await builder.build(kept);
  }
  return step;
}

/**
 * Build the decoder's graphs on `context` (weights: loadWeights() unless given; options:
 * {prefill: false} builds only the one-token graph) and its KV cache. See generate(),
 * reset() and destroy().
 */
export async function createGenerator(context, weights, options = {}) {
  weights ??= await loadWeights();
  const decode = await createStep(context, decodeGraph, weights);
  const prefill = prefillGraph && options.prefill !== false
    ? await createStep(context, prefillGraph, weights) : null;
  const kvDesc = LAYOUT.kv.map(([past]) => decode.desc[past]);
  const kvSet = () => Promise.all(kvDesc.map((d) => context.createTensor(
    {dataType: d.dataType, shape: d.shape, writable: true})));
  let cache = [await kvSet(), await kvSet()];  // read from cache[0], written to cache[1]
  let busy = false;

  async function step(s, ids, past, read) {
    const feeds = {...s.inputs};
    context.writeTensor(s.inputs[LAYOUT.inputIds], integers(s.desc[LAYOUT.inputIds], ids));
    const mask = LAYOUT.cache === "sliding"
      ? new Array(MAX_LENGTH + ids.length).fill(0).fill(1, MAX_LENGTH - past)
      : new Array(MAX_LENGTH).fill(0).fill(1, 0, past + ids.length);
    context.writeTensor(s.inputs[LAYOUT.attentionMask], integers(s.desc[LAYOUT.attentionMask], mask));
    if (LAYOUT.positionIds) {
      const positions = ids.map((_, i) => past + i);
      context.writeTensor(s.inputs[LAYOUT.positionIds], integers(s.desc[LAYOUT.positionIds], positions));
    }
    const outputs = {[LAYOUT.logits]: s.logits};
    LAYOUT.kv.forEach(([pastName, presentName], i) => {
      feeds[pastName] = cache[0][i];
      outputs[presentName] = s.present ? s.present[i] : cache[1][i];
    });
    context.dispatch(s.graph, feeds, outputs);
    if (s.shift) {
      const rows = (set) => Object.fromEntries(set.map((t, i) => [`kv${i}`, t]));
      context.dispatch(s.shift, rows(s.present), rows(cache[0]));
    } else {
      cache = [cache[1], cache[0]];
    }
    if (!read) return null;
    const dataType = s.desc[LAYOUT.logits].dataType;
    const all = new ARRAYS[dataType](await context.readTensor(s.logits));
    const row = all.subarray((ids.length - 1) * s.vocab, ids.length * s.vocab);
    return row instanceof Uint16Array && dataType === "float16" ? Float64Array.from(row, halfToNumber) : row;
  }

  async function generate(promptIds, {maxNewTokens = 16, eosTokenId = null, sampling = "greedy",
                                      onToken = null} = {}) {
    const prompt = Array.from(promptIds, Number);
    if (prompt.length < 1) throw new RangeError("generate: the prompt is empty");
    for (const id of prompt) {
      if (!Number.isInteger(id) || id < 0 || id >= decode.vocab) {
        throw new RangeError(`generate: token id ${id} is not in [0, ${decode.vocab})`);
      }
    }
    if (!Number.isInteger(maxNewTokens) || maxNewTokens < 1) {
      throw new RangeError("generate: maxNewTokens must be an integer >= 1");
    }
    if (prompt.length + maxNewTokens - 1 > MAX_LENGTH) {
      throw new RangeError(`generate: ${prompt.length} prompt tokens + ${maxNewTokens} new ones ` +
        `need ${prompt.length + maxNewTokens - 1} cache rows; this export has ${MAX_LENGTH}`);
    }
    if (busy) throw new Error("generate: this generator is already generating");
    const stops = new Set([eosTokenId ?? []].flat().map(Number));
    const choose = tokenChooser(sampling);
    busy = true;
    try {
      let past = 0, logits = null;
      while (prefill && prompt.length - past >= prefill.size) {
        const chunk = prompt.slice(past, past + prefill.size);
        logits = await step(prefill, chunk, past, past + chunk.length === prompt.length);
        past += chunk.length;
      }
      while (past < prompt.length) {
        logits = await step(decode, [prompt[past]], past, past + 1 === prompt.length);
        past += 1;
      }
      const tokens = [];
      for (;;) {
        const token = choose(logits);
        tokens.push(token);
        if (onToken) await onToken(token, tokens.length - 1);
        if (tokens.length === maxNewTokens || stops.has(token)) return tokens;
        logits = await step(decode, [token], past, true);
        past += 1;
      }
    } finally {
      busy = false;
    }
  }

  return {
    maxLength: MAX_LENGTH, prefillChunk: prefill ? prefill.size : 0, vocabSize: decode.vocab,
    generate,
    /** Write zeros over the KV cache (the keys and values of the last sequence). */
    reset() {
      if (busy) throw new Error("reset: this generator is generating");
      for (const set of cache) {
        set.forEach((t, i) => context.writeTensor(t, new ARRAYS[kvDesc[i].dataType](
          kvDesc[i].shape.reduce((a, b) => a * b, 1))));
      }
    },
    /** Release the graphs and tensors. */
    destroy() {
      for (const s of [decode, prefill].filter((x) => x)) {
        for (const t of [s.graph, s.logits, ...Object.values(s.inputs), ...(s.present ?? []),
                         ...(s.shift ? [s.shift] : [])]) t.destroy();
      }
      for (const t of cache.flat()) t.destroy();
    },
  };
}
"""


def write_generator(g: GeneratorGraphs, outdir: str | Path, stem: str = "model"
                    ) -> list[Path]:
    """Write `<stem>.js`, `<stem>.decode.js`, `<stem>.prefill.js` (when there is a prefill
    graph), `<stem>.weights` (shared) and `<stem>.html` into `outdir`."""
    from converter.io.export.generator_page import generator_page

    check_stem(stem)
    outdir = Path(outdir)
    decode, prefill, chunks = _shared_plans(g.decode, g.prefill, g.name)
    weights = outdir / f"{stem}.weights"
    with open(weights, "wb") as f:
        for chunk in chunks:
            f.write(chunk)
    written = [weights]
    graphs: Sequence[tuple[str, WebnnPlan | None]] = (("decode", decode), ("prefill", prefill))
    for part, p in graphs:
        if p is None:
            continue
        path = outdir / f"{stem}.{part}.js"
        path.write_text(module_text(p, f"{stem}.weights"), encoding="utf-8")
        written.append(path)
    main = outdir / f"{stem}.js"
    main.write_text(generator_text(g, stem), encoding="utf-8")
    page = outdir / f"{stem}.html"
    page.write_text(generator_page(stem, g.name, g.max_length,
                                   g.chunk if g.prefill is not None else 0), encoding="utf-8")
    return [main, *written[1:], weights, page]
