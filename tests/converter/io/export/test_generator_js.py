"""The generator export of a decoder (`converter.io.export.generator_js`, reached through
`export(GeneratorGraphs, format="js")`) run in Node.js against a fake WebNN context whose
`dispatch` is a counting model: the logits of a position holding token t put all mass on
t + 1 (mod the vocabulary). The expected tokens, dispatches, masks, positions and KV tensor
hand-offs are written from the documented contract, not from the module: the prompt runs in
prefill chunks then one token at a time, every step's past tensors are the previous step's
present ones, only the logits of the steps whose token is chosen are read back. The real
model in the real browser is tests/browser/test_generator.py."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraph, MLGraphBuilder
from converter.io.export.exporter import export
from converter.io.export.generator_js import GeneratorGraphs
from converter.io.serialize.errors import WebnnExportError

NODE = shutil.which("node")
L, V, CHUNK = 8, 6, 2
IDS, MASK, POS, LOGITS = "input_ids", "attention_mask", "position_ids", "logits"
PAST, PRESENT = "past_key_values.0.key</script>\"", "present.0.key</script>\""
"""Hostile names: they must reach the JavaScript as inert string literals."""
W = np.arange(V * V, dtype=np.float32).reshape(V, V)


def _step(seq: int, in_place: bool = True) -> MLGraph:
    b = MLGraphBuilder(ML().create_context())
    ids = b.input(IDS, [1, seq], "int32")
    mask = b.input(MASK, [1, L if in_place else L + seq], "int32")
    positions = b.input(POS, [1, seq], "int32")
    past = b.input(PAST, [1, 1, L, 2], "float32")
    used = b.cast(b.add(b.reduce_sum(mask), b.reduce_sum(positions)), "float32")
    logits = b.add(b.reshape(b.gather(b.constant(W), ids), [1, seq, V]),
                   b.mul(used, b.constant(np.float32(0))))
    if seq > 1:  # a constant only the prefill graph has
        logits = b.add(logits, b.constant(np.linspace(0, 1, seq * V, dtype=np.float32)
                                          .reshape(1, seq, V)))
    present = b.add(past, b.constant(np.float32(1))) if in_place else b.concat(
        [past, b.constant(np.zeros((1, 1, seq, 2), np.float32))], 2)
    return b.build({LOGITS: logits, PRESENT: present})


def _graphs(prefill: bool = True, cache: str = "in-place") -> GeneratorGraphs:
    in_place = cache == "in-place"
    return GeneratorGraphs(_step(1, in_place), _step(CHUNK, in_place) if prefill else None,
                           CHUNK, L, IDS, MASK, POS, (PAST,), (PRESENT,), LOGITS,
                           name="count</h1><script>", cache=cache)


FAKE = r"""
import {pathToFileURL} from "node:url";
const [modulePath, outPath, optionsJson] = process.argv.slice(2);
let nextId = 0;
globalThis.MLGraphBuilder = function () {
  const inputs = {};
  const base = {
    input(name, desc) { inputs[name] = desc; return {}; },
    constant() { return {}; },
    async build() { return {inputs, destroy() {}}; },
  };
  return new Proxy(base, {get: (t, p) => (p in t ? t[p] : () => ({}))});
};
const log = [];
const context = {
  async createTensor(desc) {
    const size = desc.shape.reduce((a, b) => a * b, 1);
    return {id: nextId++, desc, data: new Float32Array(size), destroy() {}};
  },
  writeTensor(tensor, data) { tensor.data = Array.from(data, Number); },
  dispatch(graph, inputs, outputs) {
    if (inputs.kv0) {  // the generator's own slice graph of a sliding window
      log.push({op: "shift", from: inputs.kv0.id, to: outputs.kv0.id,
                rows: graph.inputs.kv0.shape[2]});
      return;
    }
    const names = Object.keys(graph.inputs);
    const ids = inputs[names[0]].data, V = outputs.logits.desc.shape[2];
    const logits = new Float32Array(ids.length * V);
    ids.forEach((t, s) => { logits[s * V + (t + 1) % V] = 1; });
    outputs["logits"].data = logits;
    const past = Object.keys(inputs).find((n) => n.startsWith("past"));
    const present = Object.keys(outputs).find((n) => n.startsWith("present"));
    log.push({op: "dispatch", seq: ids.length, ids: Array.from(ids),
              mask: Array.from(inputs["attention_mask"].data),
              positions: Array.from(inputs["position_ids"].data),
              past: inputs[past].id, present: outputs[present].id});
  },
  async readTensor(tensor) { log.push({op: "read"}); return Float32Array.from(tensor.data).buffer; },
};
const mod = await import(pathToFileURL(modulePath).href);
const options = JSON.parse(optionsJson);
const generator = await mod.createGenerator(context, undefined, options.create);
const streamed = [];
const tokens = await generator.generate(options.prompt, {...options.generate,
  onToken: (id, i) => { streamed.push([id, i]); }});
let error = null;
try { await generator.generate([1], {maxNewTokens: 100}); } catch (e) { error = `${e.name}: ${e.message}`; }
const fs = await import("node:fs");
fs.writeFileSync(outPath, JSON.stringify({tokens, streamed, log, error, maxLength: mod.MAX_LENGTH,
  chunk: generator.prefillChunk, graphName: mod.GRAPH_NAME}));
"""


def _run(tmp_path: Path, graphs: GeneratorGraphs, prompt: list[int], **generate: object
         ) -> dict[str, object]:
    folder = tmp_path / "out"
    files = export(graphs, folder, format="js", force=True)
    assert sorted(p.name for p in files) == sorted(
        ["model.js", "model.decode.js", "model.weights", "model.html"]
        + (["model.prefill.js"] if graphs.prefill is not None else []))
    (tmp_path / "run.mjs").write_text(FAKE)
    # the weights file's fetch is replaced: node has no server; loadWeights reads the file
    options = {"prompt": prompt, "generate": generate, "create": {}}
    script = (folder / "model.decode.js").read_text()
    (folder / "model.decode.js").write_text(script.replace(
        "const response = await fetch(url);",
        "const response = {ok: true, arrayBuffer: async () => (await import('node:fs'))"
        ".readFileSync(url)};"))
    subprocess.run([str(NODE), str(tmp_path / "run.mjs"), str(folder / "model.js"),
                    str(tmp_path / "out.json"), json.dumps(options)], check=True,
                   capture_output=True, text=True)
    result: dict[str, object] = json.loads((tmp_path / "out.json").read_text())
    return result


@pytest.mark.skipif(NODE is None, reason="needs Node.js")
def test_counting_model_through_the_generator(tmp_path: Path) -> None:
    got = _run(tmp_path, _graphs(), [1, 2, 3], maxNewTokens=5)
    assert got["tokens"] == [4, 5, 0, 1, 2]
    assert got["streamed"] == [[t, i] for i, t in enumerate([4, 5, 0, 1, 2])]
    assert (got["maxLength"], got["chunk"], got["graphName"]) == (L, CHUNK, "count</h1><script>")
    log = got["log"]
    assert isinstance(log, list)
    steps = [e for e in log if e["op"] == "dispatch"]
    # prompt: a chunk of 2, then 1 token; then 4 decode steps (the 5th token is not fed)
    assert [(s["seq"], s["ids"], s["positions"]) for s in steps] == [
        (2, [1, 2], [0, 1]), (1, [3], [2]), (1, [4], [3]), (1, [5], [4]), (1, [0], [5]),
        (1, [1], [6])]
    assert [s["mask"] for s in steps] == [[1] * n + [0] * (L - n) for n in (2, 3, 4, 5, 6, 7)]
    for before, after in zip(steps, steps[1:], strict=False):
        assert after["past"] == before["present"] and after["present"] == before["past"]
    # read back: after the last prompt step and after each decode step, never after the chunk
    assert [e["op"] for e in log] == ["dispatch", "dispatch", "read"] + ["dispatch", "read"] * 4
    assert str(got["error"]).startswith("RangeError: generate: 1 prompt tokens + 100 new ones")


@pytest.mark.skipif(NODE is None, reason="needs Node.js")
def test_eos_and_no_prefill_graph(tmp_path: Path) -> None:
    got = _run(tmp_path, _graphs(prefill=False), [5], maxNewTokens=8, eosTokenId=[2, 9])
    assert got["tokens"] == [0, 1, 2] and got["chunk"] == 0


def test_weights_shared_and_names_inert(tmp_path: Path) -> None:
    files = export(_graphs(), tmp_path / "out", format="js")
    weights = (tmp_path / "out" / "model.weights").read_bytes()
    # header + W once + the prefill graph's own constant (the decode graph's W reused)
    assert len(weights) == 8 + W.nbytes + CHUNK * V * 4
    assert weights.count(W.tobytes()) == 1
    for path in files:
        if path.suffix in (".js", ".html"):
            text = path.read_text()
            assert "</script>\"" not in text and "</h1><script>" not in text, path.name
    main = (tmp_path / "out" / "model.js").read_text()
    assert '"past_key_values.0.key\\u003c/script\\u003e\\""' in main


@pytest.mark.skipif(NODE is None, reason="needs Node.js")
def test_sliding_window(tmp_path: Path) -> None:
    """A model that appends to its cache: the valid rows are the window's last ones (mask
    [1, L + S], ones from L - past on), the step writes its own present tensors and the
    generator's slice graph copies them back into the one window, which every step reads."""
    got = _run(tmp_path, _graphs(cache="sliding"), [1, 2, 3], maxNewTokens=3)
    assert got["tokens"] == [4, 5, 0]
    log = got["log"]
    assert isinstance(log, list)
    steps = [e for e in log if e["op"] == "dispatch"]
    assert [(s["ids"], s["positions"]) for s in steps] == [
        ([1, 2], [0, 1]), ([3], [2]), ([4], [3]), ([5], [4])]
    assert [s["mask"] for s in steps] == [
        [0] * (L - p) + [1] * (p + n) for p, n in ((0, 2), (2, 1), (3, 1), (4, 1))]
    assert len({s["past"] for s in steps}) == 1
    shifts = [e for e in log if e["op"] == "shift"]
    assert [(e["from"], e["to"], e["rows"]) for e in shifts] == [
        (s["present"], s["past"], L + len(s["ids"])) for s in steps]
    assert [e["op"] for e in log] == ["dispatch", "shift"] * 2 + ["read"] + [
        "dispatch", "shift", "read"] * 2


def test_refusals(tmp_path: Path) -> None:
    with pytest.raises(WebnnExportError, match="not written in place"):
        GeneratorGraphs(_step(1, in_place=False), None, 0, L, IDS, MASK, POS, (PAST,),
                        (PRESENT,), LOGITS)
    with pytest.raises(WebnnExportError, match="is not the past"):
        GeneratorGraphs(_step(1), None, 0, L, IDS, MASK, POS, (PAST,), (PRESENT,), LOGITS,
                        cache="sliding")
    with pytest.raises(WebnnExportError, match="lacks"):
        GeneratorGraphs(_step(1), None, 0, L, IDS, MASK, "positions", (PAST,), (PRESENT,),
                        LOGITS)
    with pytest.raises(ValueError, match="format 'js' or 'all'"):
        export(_graphs(), tmp_path / "x", format="webnn")
