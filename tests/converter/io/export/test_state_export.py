"""Carried state in the exports (issue 24, point 3): the manifest's `state` table
(`converter.io.serialize.state_table`) round-trips the pairs with their initial values, the
generated module carries the state only for stateful graphs (a stateless module has no
STATE / resetState code), and its `compute()` in node against a fake WebNN context feeds the
state input the initial value, then the output of the call before."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import converter
from converter.io.export.exporter import export
from converter.io.export.javascript import to_javascript
from converter.io.serialize.errors import WebnnFormatError
from converter.io.serialize.plan import plan
from converter.io.serialize.state_table import load_state, read_state, state_entries
from converter.results.state import StatePair
from tests.converter.frontends.tflite.streaming import FRAME, WINDOW, streaming_model
from tests.converter.io.export.node_harness import _run_check, needs_node


@pytest.fixture(scope="module")
def streaming() -> converter.ConversionResult:
    return converter.convert(streaming_model())


def test_manifest_state_round_trips(streaming: converter.ConversionResult, tmp_path: Path
                                    ) -> None:
    export(streaming, tmp_path / "out", format="webnn")
    manifest = json.loads((tmp_path / "out" / "model.manifest.json").read_text())
    [entry] = manifest["state"]
    assert entry == {"input": "stream/ring_buffer", "output": "new_state",
                     "dataType": "float32", "shape": [1, WINDOW - 1, FRAME],
                     "initial": {"fill": 0.25}}
    (pair,) = load_state(tmp_path / "out")
    assert (pair.input, pair.output) == ("stream/ring_buffer", "new_state")
    np.testing.assert_array_equal(pair.initial, streaming.state[0].initial)
    graph = converter.load(tmp_path / "out")  # the graph loads as before
    assert set(graph.inputs) == {"features", "stream/ring_buffer"}


def test_non_uniform_initial_values_and_renamed_names() -> None:
    start = np.arange(6, dtype=np.int32).reshape(2, 3)
    pair = StatePair("my state", "next state", start)
    entries = state_entries([pair], {"my_state": "my state"}, {"next_state": "next state"})
    assert entries[0]["input"] == "my_state" and "base64" in entries[0]["initial"]
    manifest = {"state": entries, "names": {"inputs": {"my_state": "my state"},
                                            "outputs": {"next_state": "next state"}}}
    (back,) = read_state(manifest, "m.json")
    assert (back.input, back.output) == ("my state", "next state")
    np.testing.assert_array_equal(back.initial, start)


@pytest.mark.parametrize("entry, words", [
    ({"input": "a", "output": "b", "dataType": "int4", "shape": [2],
      "initial": {"fill": 0}}, "data type"),
    ({"input": "a", "output": "b", "dataType": "float32", "shape": [0],
      "initial": {"fill": 0}}, "positive integers"),
    ({"input": "a", "output": "b", "dataType": "float32", "shape": [2],
      "initial": {"base64": "AAAA"}}, "needs 8"),
    ({"input": "a", "output": "b", "dataType": "float32", "shape": [2],
      "initial": {"fill": "x"}}, "initial must be"),
    ({"input": 1, "output": "b", "dataType": "float32"}, "strings"),
])
def test_bad_state_tables_are_one_line_errors(entry: dict, words: str) -> None:
    with pytest.raises(WebnnFormatError, match=words) as info:
        read_state({"state": [entry]}, "m.json")
    assert "\n" not in str(info.value)


def test_module_carries_state_only_when_there_is_some(streaming: converter.ConversionResult
                                                      ) -> None:
    stateful = to_javascript(streaming.graph, "m", plan_=plan(streaming.graph, "m",
                                                               streaming.state)).module
    assert 'export const STATE = [\n  {input: "stream/ring_buffer", output: "new_state", ' \
           'initial: () => new Float32Array(24).fill(0.25)},\n];' in stateful
    assert "resetState," in stateful and "state.get(d.name)" in stateful
    stateless = to_javascript(streaming.graph, "m").module
    for word in ("STATE", "resetState", "state.get"):
        assert word not in stateless


STATE_CHECK = """
const mod = await import(process.argv[2]);
const written = [];
let dispatches = 0;
globalThis.MLGraphBuilder = function () {
  return new Proxy({}, {get(target, prop) {
    if (prop === "then") return undefined;
    if (prop === "build") return async () => ({destroy() {}});
    return () => ({});
  }});
};
const context = {
  async createTensor(desc) { return {desc, destroy() {}}; },
  writeTensor(tensor, data) { written.push(data[0]); },
  dispatch() { dispatches++; },
  async readTensor(tensor) {
    return new Float32Array(tensor.desc.shape.reduce((a, b) => a * b, 1)).fill(dispatches).buffer;
  },
};
const model = await mod.createModel(context, new Uint8Array(100000));
const frame = new Float32Array(8).fill(7);
const record = [];
const run = async (feeds) => {
  const before = written.length;
  await model.compute(feeds);
  record.push(written.slice(before));
};
await run({features: frame});
await run({features: frame});
await run({features: frame});
model.resetState();
await run({features: frame});
await run({features: frame, "stream/ring_buffer": new Float32Array(24).fill(-5)});
console.log(JSON.stringify({record, inputs: model.inputs.map((d) => d.name)}));
"""


@needs_node
def test_compute_feeds_initial_then_previous_state(streaming: converter.ConversionResult,
                                                   tmp_path: Path) -> None:
    p = plan(streaming.graph, "m", streaming.state)
    got = _run_check(to_javascript(streaming.graph, "m", plan_=p).module, STATE_CHECK,
                     tmp_path)
    order = got["inputs"]
    state_at = order.index("stream/ring_buffer")
    states = [values[state_at] for values in got["record"]]
    # initial, then the outputs of dispatch 1 and 2; reset: initial; given: the caller's
    assert states == [0.25, 1, 2, 0.25, -5]
