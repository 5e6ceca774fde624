"""The exported module of a model with host steps (issue 24, point 1; docs/host-steps-js.md):
H1's data-dependent-tail models (tests/converter/conversion/host_models.py) converted with no
flags and exported as JavaScript; `createModel(context).compute(feeds)` run in node against
a fake WebNN context whose readTensor gives what the converted graph computes (the reference
backend), so the graph's outputs (narrowed for the portable target) go through
widenOutput and the host steps as in a browser; the results against onnxruntime on the
original model. Also: modules without host steps are unchanged, the page runs such a module
(fake DOM) and shows data-dependent shapes."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest

import converter
from converter.io.export.javascript import to_javascript
from converter.io.serialize.plan import plan
from converter.results.compiled import compile_executable
from tests.converter.conversion.host_models import MODELS, make_detection, make_streaming_tail
from tests.converter.io.export.host_js_harness import NUMPY
from tests.converter.io.export.node_harness import _node, needs_node, run_page_files

DRIVER = r"""
import fs from "node:fs";
const jobs = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const bytes = (b64) => Uint8Array.from(Buffer.from(b64, "base64")).buffer;
const encode = (t) => ({dataType: t.dataType, shape: t.shape, array: t.data.constructor.name,
  base64: Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength).toString("base64")});
// buildGraph's builder: every operand a dummy (an iterable one, for ops returning lists)
const operand = () => ({*[Symbol.iterator]() { for (;;) yield operand(); }});
globalThis.MLGraphBuilder = function () {
  return new Proxy({}, {get(target, prop) {
    if (prop === "build") return async () => ({destroy() {}});
    return prop === "then" ? undefined : () => operand();
  }});
};
const answers = [];
for (const job of jobs) {
  const mod = await import(job.module);
  let dispatches = 0;
  const context = {
    async createTensor(desc) { return {desc, destroy() {}}; },
    writeTensor(tensor, data) { tensor.data = data; },
    dispatch(graph, inputs, outputs) {
      dispatches++;
      for (const [name, t] of Object.entries(outputs)) t.data = bytes(job.graphOutputs[name]);
    },
    async readTensor(tensor) { return tensor.data; },
  };
  const model = await mod.createModel(context, new Uint8Array(0));
  const feeds = Object.fromEntries(Object.entries(job.feeds).map(([name, b64]) =>
    [name, new Float32Array(bytes(b64))]));
  const plain = await model.compute(feeds);
  const tensors = await model.computeTensors(feeds);
  answers.push({dispatches, keys: Object.keys(plain),
    plainTypes: Object.values(plain).map((a) => a.constructor.name),
    tensors: Object.fromEntries(Object.entries(tensors).map(([n, t]) => [n, encode(t)])),
    outputs: mod.OUTPUTS, graphOutputs: mod.GRAPH_OUTPUTS.map((d) => d.name)});
}
fs.writeFileSync(process.argv[3], JSON.stringify(answers));
"""

SEEDS = (0, 1, 2)


def _onnxruntime(model: Any, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, inputs), strict=True))


def _raw_graph_outputs(result: converter.ConversionResult, inputs: dict[str, np.ndarray]
                       ) -> dict[str, str]:
    """What the WebNN graph gives (its own data types), as base64: readTensor's bytes."""
    executable = compile_executable(result.graph, "reference")
    raw = executable.run({n: inputs[n] for n in result.graph.inputs})
    return {n: base64.b64encode(np.asarray(raw[n], result.graph.outputs[n].data_type)
                                .tobytes()).decode("ascii") for n in result.graph.outputs}


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], Any]:
    folder = tmp_path_factory.mktemp("host_module")
    jobs, keys = [], []
    for name in sorted(MODELS):
        result = None
        for seed in SEEDS:
            model, inputs = MODELS[name](seed)
            result = result or converter.convert(model)
            assert result.host is not None
            module = folder / f"{name}.mjs"
            if seed == SEEDS[0]:
                files = to_javascript(result.graph, name, host=result.host,
                                      outputs=result.outputs, inputs=result.inputs)
                module.write_text(files.module, encoding="utf-8")
            jobs.append({"module": module.as_uri(), "graphOutputs": _raw_graph_outputs(
                result, inputs), "feeds": {n: base64.b64encode(a.tobytes()).decode("ascii")
                                           for n, a in inputs.items()}})
            keys.append((name, seed))
    (folder / "jobs.json").write_text(json.dumps(jobs))
    (folder / "driver.mjs").write_text(DRIVER)
    run = _node(folder / "driver.mjs", folder / "jobs.json", folder / "answers.json")
    assert run.returncode == 0, run.stderr
    return dict(zip(keys, json.loads((folder / "answers.json").read_text()), strict=True))


@needs_node
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_compute_matches_onnxruntime(name: str, seed: int,
                                     answers: dict[tuple[str, int], Any]) -> None:
    model, inputs = MODELS[name](seed)
    want = _onnxruntime(model, inputs)
    got = answers[(name, seed)]
    assert got["keys"] == list(want)  # the model's outputs in order, no boundary values
    assert got["dispatches"] == 2
    for key, expected in want.items():
        t = got["tensors"][key]
        value = np.frombuffer(base64.b64decode(t["base64"]), NUMPY[t["dataType"]])
        assert t["dataType"] == expected.dtype.name, key
        assert t["shape"] == list(expected.shape), key
        if expected.dtype.kind == "f":
            np.testing.assert_allclose(value.reshape(expected.shape), expected, rtol=1e-5,
                                       atol=1e-6, err_msg=key)
        else:
            np.testing.assert_array_equal(value.reshape(expected.shape), expected, key)
    assert [row["name"] for row in got["outputs"]] == list(want)


@needs_node
def test_detection_outputs_and_types(answers: dict[tuple[str, int], Any]) -> None:
    got = answers[("detection", 0)]
    assert got["plainTypes"] == ["Float32Array", "Float32Array", "BigInt64Array"]
    assert got["outputs"] == [{"name": "det_boxes", "dataType": "float32", "shape": None},
                              {"name": "det_scores", "dataType": "float32", "shape": None},
                              {"name": "det_labels", "dataType": "int64", "shape": None}]
    assert set(got["graphOutputs"]) == {"mask", "best", "labels_all"}


def test_module_without_host_steps_is_unchanged() -> None:
    model, _ = make_nonzero_gather_free()
    result = converter.convert(model)
    assert result.host is None
    plain = to_javascript(result.graph, "m")
    assert to_javascript(result.graph, "m", host=None, outputs=result.outputs) == plain
    assert "runHostSteps" not in plain.module and "computeTensors" not in plain.html


def make_nonzero_gather_free() -> tuple[Any, dict[str, np.ndarray]]:
    """The detection model's static head alone (no data-dependent tail)."""
    import onnx.helper as oh
    from onnx import TensorProto

    node = oh.make_node("Sigmoid", ["x"], ["y"])
    graph = oh.make_graph([node], "head", [oh.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                      [4])],
                          [oh.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])
    model.ir_version = 8
    return model, {"x": np.zeros(4, np.float32)}


@needs_node
def test_page_runs_and_shows_data_dependent_shapes(tmp_path: Path) -> None:
    """The page with the fake DOM and context of node_harness (readTensor gives zeros: no
    score passes the threshold, so every detection output is empty)."""
    model, _ = make_detection()
    result = converter.convert(model)
    p = plan(result.graph, "detection")
    files = to_javascript(result.graph, "model", plan_=p, host=result.host,
                          outputs=result.outputs, inputs=result.inputs)
    assert "data-dependent (host steps)" in files.html
    page = run_page_files(tmp_path, files, p)
    assert page["status"] == "Done.", page
    assert '"det_boxes": float32[0, 4]' in page["log"]
    assert '"det_labels": int64[0]' in page["log"]


def test_export_names_a_host_op_without_javascript(tmp_path: Path) -> None:
    """`convert --format js` of a model whose host steps hold an op the JavaScript runtime
    lacks: one line naming the node and op; the other formats still export."""
    import onnx
    import onnx.helper as oh
    from onnx import TensorProto

    from converter.io.export.exporter import export
    from converter.io.serialize.errors import WebnnExportError

    nodes = [oh.make_node("Greater", ["x", "half"], ["mask"]),
             oh.make_node("NonZero", ["mask"], ["nz"]),
             oh.make_node("Cast", ["nz"], ["nzf"], to=1),
             oh.make_node("Einsum", ["nzf"], ["y"], equation="ij->ji", name="/swap")]
    graph = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                          [oh.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [onnx.numpy_helper.from_array(np.array(0.5, np.float32), "half")])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])
    model.ir_version = 8
    result = converter.convert(model)
    assert result.host is not None
    with pytest.raises(WebnnExportError) as error:
        export(result, tmp_path / "js", format="js")
    message = str(error.value)
    assert "\n" not in message and "'/swap'" in message and "Einsum" in message
    assert export(result, tmp_path / "webnn", format="webnn")


STATE_DRIVER = r"""
import fs from "node:fs";
const job = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const bytes = (b64) => Uint8Array.from(Buffer.from(b64, "base64")).buffer;
const operand = () => ({*[Symbol.iterator]() { for (;;) yield operand(); }});
globalThis.MLGraphBuilder = function () {
  return new Proxy({}, {get(target, prop) {
    if (prop === "build") return async () => ({destroy() {}});
    return prop === "then" ? undefined : () => operand();
  }});
};
const mod = await import(job.module);
let call = 0;
const writtenState = [];
const context = {
  async createTensor(desc) { return {desc, destroy() {}}; },
  writeTensor(tensor, data) { tensor.data = data; },
  dispatch(graph, inputs, outputs) {
    writtenState.push(Array.from(inputs.state.data));
    for (const [name, t] of Object.entries(outputs)) t.data = bytes(job.graphOutputs[call][name]);
    call++;
  },
  async readTensor(tensor) { return tensor.data; },
};
const model = await mod.createModel(context, new Uint8Array(0));
const results = [];
for (let i = 0; i < job.calls; i++) {
  const out = await model.computeTensors({x: new Float32Array(bytes(job.x))});
  results.push({stateN: Array.from(out.stateN.data), idx: Array.from(out.idx.data, Number),
                idxShape: out.idx.shape});
}
console.log(JSON.stringify({writtenState, results}));
"""


@needs_node
def test_carried_state_with_host_steps(tmp_path: Path) -> None:
    """A streaming model whose tail is data-dependent: compute() carries the state (the
    graph's stateN back into its state input) and runs the host steps on every call; each
    call's outputs equal onnxruntime's on the original model with the state fed by hand."""
    model = make_streaming_tail()
    result = converter.convert(model)
    assert result.state and result.host is not None
    x = np.array([0.5, 1.0, 0.0, 2.0, 0.25], np.float32)
    calls, state, graph_outputs, want = 4, np.zeros(5, np.float32), [], []
    for _ in range(calls):
        graph_outputs.append(_raw_graph_outputs(result, {"x": x, "state": state}))
        want.append(_onnxruntime(model, {"x": x, "state": state}))
        state = want[-1]["stateN"]
    files = to_javascript(result.graph, "m", plan_=plan(result.graph, "m", result.state),
                          host=result.host, outputs=result.outputs, inputs=result.inputs)
    module = tmp_path / "m.mjs"
    module.write_text(files.module, encoding="utf-8")
    (tmp_path / "job.json").write_text(json.dumps({
        "module": module.as_uri(), "calls": calls, "graphOutputs": graph_outputs,
        "x": base64.b64encode(x.tobytes()).decode("ascii")}))
    (tmp_path / "driver.mjs").write_text(STATE_DRIVER)
    run = _node(tmp_path / "driver.mjs", tmp_path / "job.json")
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got["writtenState"] == [[0] * 5] + [w["stateN"].tolist() for w in want[:-1]]
    for answer, expected in zip(got["results"], want, strict=True):
        np.testing.assert_array_equal(answer["stateN"], expected["stateN"])
        assert answer["idxShape"] == list(expected["idx"].shape)
        assert answer["idx"] == expected["idx"].reshape(-1).tolist()


LARGE_DRIVER = r"""
import fs from "node:fs";
const [modulePath, graphOutputsPath, xPath] = process.argv.slice(2);
globalThis.fetch = async (url) => ({ok: true, status: 200,
  json: async () => JSON.parse(fs.readFileSync(new URL(url), "utf8"))});
const operand = () => ({*[Symbol.iterator]() { for (;;) yield operand(); }});
globalThis.MLGraphBuilder = function () {
  return new Proxy({}, {get(target, prop) {
    if (prop === "build") return async () => ({destroy() {}});
    return prop === "then" ? undefined : () => operand();
  }});
};
const graphOutputs = JSON.parse(fs.readFileSync(graphOutputsPath, "utf8"));
const bytes = (b64) => Uint8Array.from(Buffer.from(b64, "base64")).buffer;
const context = {
  async createTensor(desc) { return {desc, destroy() {}}; },
  writeTensor(tensor, data) { tensor.data = data; },
  dispatch(graph, inputs, outputs) {
    for (const [name, t] of Object.entries(outputs)) t.data = bytes(graphOutputs[name]);
  },
  async readTensor(tensor) { return tensor.data; },
};
const mod = await import(modulePath);
const model = await mod.createModel(context, new Uint8Array(0));
const out = await model.computeTensors({x: new Float32Array(bytes(fs.readFileSync(xPath, "utf8")))});
console.log(JSON.stringify({file: mod.HOST_FILE, shape: out.picked.shape, picked: Array.from(out.picked.data)}));
"""


@needs_node
def test_large_host_constants_come_from_the_host_file(tmp_path: Path) -> None:
    """Host-step constants over 1 MiB stay out of the module: export() writes them to
    `model.host.json` beside it, createModel() reads them from there; outputs equal
    onnxruntime's."""
    import onnx
    import onnx.helper as oh
    from onnx import TensorProto

    from converter.io.export.exporter import export

    table = np.random.default_rng(3).normal(size=(300_000,)).astype(np.float32)
    nodes = [oh.make_node("Greater", ["x", "half"], ["mask"]),
             oh.make_node("NonZero", ["mask"], ["nz"]),
             oh.make_node("Reshape", ["nz", "minus1"], ["flat"]),
             oh.make_node("Mul", ["flat", "stride"], ["at"]),
             oh.make_node("Gather", ["table", "at"], ["picked"], axis=0)]
    graph = oh.make_graph(
        nodes, "g", [oh.make_tensor_value_info("x", TensorProto.FLOAT, [64])],
        [oh.make_tensor_value_info("picked", TensorProto.FLOAT, ["n"])],
        [onnx.numpy_helper.from_array(v, k) for k, v in (
            ("half", np.array(0.5, np.float32)), ("minus1", np.array([-1], np.int64)),
            ("stride", np.array(4000, np.int64)), ("table", table))])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])
    model.ir_version = 8
    x = np.random.default_rng(4).uniform(0, 1, 64).astype(np.float32)
    result = converter.convert(model)
    assert result.host is not None
    export(result, tmp_path / "site", format="js", stem="model")
    module = tmp_path / "site" / "model.js"
    assert module.stat().st_size < 200_000  # the 1.2 MB table is not in it
    (tmp_path / "graph.json").write_text(json.dumps(_raw_graph_outputs(result, {"x": x})))
    (tmp_path / "x.txt").write_text(base64.b64encode(x.tobytes()).decode("ascii"))
    (tmp_path / "driver.mjs").write_text(LARGE_DRIVER)
    (tmp_path / "package.json").write_text('{"type": "module"}')
    run = _node(tmp_path / "driver.mjs", module.as_uri(), tmp_path / "graph.json",
                tmp_path / "x.txt")
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    want = _onnxruntime(model, {"x": x})["picked"]
    assert got["file"] == "model.host.json" and got["shape"] == list(want.shape)
    np.testing.assert_array_equal(np.array(got["picked"], np.float32), want)
