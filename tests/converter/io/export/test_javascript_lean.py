"""The generated module is lean and idiomatic (issue 23): the tiny CNN's module is under 60
lines without comments, writes no option equal to the builder's default, names values after
the `.webnn` file's identifiers, emits no helper it does not use, takes the weights as views
of one buffer (no per-tensor copies), and its `createModel(context).compute(feeds)` (run in
node against a fake WebNN context) creates its tensors once and reuses them on every call.
Hostile graph names still give valid, unique JavaScript identifiers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter import convert
from converter.core.webnn import ML, MLGraph, MLGraphBuilder
from converter.io.export.javascript import to_javascript
from converter.io.export.js_options import JS_RESERVED
from converter.io.serialize.plan import plan
from converter.zoo.models.make_tiny_cnn import make
from tests.converter.io.export.graphs import FAMILIES, HOSTILE_NAMES
from tests.converter.io.export.node_harness import _node, _run_check, needs_node

IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")
UNUSED_HELPERS = ("narrowInput", "widenOutput", "NARROW_RANGES", "splat", "inlineBytes",
                  "typedArrayFor", "MANIFEST")
DEFAULTS = ("strides: [1, 1]", "dilations: [1, 1]", "groups: 1", 'inputLayout: "nchw"',
            'filterLayout: "oihw"', "outputShapeRounding", 'layout: "nchw"', "alpha: 1.0",
            "beta: 1.0", "aTranspose", "padding: [0, 0, 0, 0]", "keepDimensions: false")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> MLGraph:
    path = tmp_path_factory.mktemp("tiny") / "tiny_cnn.onnx"
    make(path, seed=0)
    return convert(str(path), free_dims={"batch": 1}).graph


def _code_lines(module: str) -> list[str]:
    """The module's lines that are neither blank nor comments (// and /** ... */ blocks)."""
    out, in_block = [], False
    for line in module.splitlines():
        text = line.strip()
        if in_block:
            in_block = "*/" not in text
            continue
        if text.startswith("/*"):
            in_block = "*/" not in text
            continue
        if text and not text.startswith("//"):
            out.append(line)
    return out


def test_tiny_cnn_module_is_lean(tiny: MLGraph) -> None:
    p = plan(tiny, "tiny")
    module = to_javascript(tiny, "tiny", plan_=p).module
    lines = _code_lines(module)
    assert len(lines) < 60, "\n".join(lines)
    for text in (*DEFAULTS, *UNUSED_HELPERS, ".slice(", "v0", '["probs"]'):
        assert text not in module, text
    # the values carry the .webnn file's names; the output is a shorthand key
    for op in tiny.operations:
        assert f"const {p.ident(op.outputs[0])} = builder.{op.op}(" in module
    assert "return builder.build({probs});" in module
    # the default target (portable) runs it channels-last: one transpose, at the input
    assert "builder.transpose(image, {permutation: [0, 2, 3, 1]})" in module
    assert module.count("builder.transpose(") == 1
    assert ("builder.conv2d(transpose_0, const_0, {padding: [1, 1, 1, 1], inputLayout: "
            '"nhwc", filterLayout: "ohwi", bias: const_1})') in module
    assert ("builder.maxPool2d(relu_2, {windowDimensions: [2, 2], strides: [2, 2], layout: "
            '"nhwc"})') in module
    assert "builder.gemm(reshape_7, const_4, {c: const_5, bTranspose: true})" in module
    # every weight is a view of the one weights buffer, created as soon as its bytes are there
    for c in p.blob_constants:
        assert f"await weights.subarray({c.offset}, {c.offset + c.length})" in module
    assert "export async function createModel(context, weights = loadWeights())" in module


def test_helpers_come_only_with_narrowed_io() -> None:
    for family in FAMILIES:
        module = to_javascript(FAMILIES[family]().graph, "m").module
        for helper in ("narrowInput", "widenOutput", "NARROW_RANGES"):
            assert helper not in module, (family, helper)
    b = MLGraphBuilder(ML().create_context())
    graph = b.build({"y": b.relu(b.input("x", [2], "float32"))})
    module = to_javascript(graph, "m").module
    assert "export async function loadWeights() { return null; }" in module
    assert "weightsFromBuffer" not in module and "fetch(" not in module


def test_hostile_names_give_valid_unique_identifiers() -> None:
    names = [*HOSTILE_NAMES, "class", "builder", "await", "x.y", "x_y", "x/y", "MLGraphBuilder",
             "Float32Array", "const_0", "a\u2028b", "名前"]
    b = MLGraphBuilder(ML().create_context())
    outs = {}
    for i, name in enumerate(names):
        x = b.input(name, [2], "float32")
        outs[names[-1 - i]] = b.add(x, b.constant(np.arange(2, dtype=np.float32) + i))
    graph = b.build(outs)
    module = to_javascript(graph, "m").module
    assert module.isascii() and "</script" not in module.lower() and "\u2028" not in module
    start = module.index("export async function buildGraph")
    body = module[start:module.index("\n}\n", start)]
    declared = re.findall(r"^  const (\S+) = ", body, re.M)
    count = len(graph.inputs) + len(graph.constants) + sum(len(o.outputs)
                                                          for o in graph.operations)
    assert len(declared) == len(set(declared)) == count + 1  # + builder
    for ident in declared:
        assert IDENT.match(ident) and (ident not in JS_RESERVED or ident == "builder"), ident


@needs_node
def test_hostile_module_runs_in_node(tmp_path: Path) -> None:
    module = to_javascript(FAMILIES["hostile"]().graph, "m").module
    (tmp_path / "m.mjs").write_text(module)
    result = _node("--check", tmp_path / "m.mjs")
    assert result.returncode == 0, result.stderr


COMPUTE_CHECK = """
const mod = await import(process.argv[2]);
const created = [], written = [], destroyed = [];
let dispatches = 0;
globalThis.MLGraphBuilder = function () {
  return new Proxy({}, {get(target, prop) {
    if (prop === "then") return undefined;
    if (prop === "build") return async () => ({destroy() { destroyed.push("graph"); }});
    return () => ({});
  }});
};
const context = {
  async createTensor(desc) {
    const t = {desc, id: created.length, destroy() { destroyed.push(this.id); }};
    created.push(desc);
    return t;
  },
  writeTensor(tensor, data) { written.push([tensor.id, data[0]]); },
  dispatch(graph, inputs, outputs) { dispatches++; },
  async readTensor(tensor) {
    return new Float32Array(tensor.desc.shape.reduce((a, b) => a * b, 1)).fill(dispatches).buffer;
  },
};
const model = await mod.createModel(context, new Uint8Array(16000));
const a = await model.compute({image: new Float32Array(768).fill(1)});
const b = await model.compute({image: new Float32Array(768).fill(2)});
let missing = "";
try { await model.compute({}); } catch (e) { missing = String(e); }
model.destroy();
console.log(JSON.stringify({created, written, dispatches, destroyed, missing,
  a: Array.from(a.probs), b: Array.from(b.probs), type: a.probs.constructor.name,
  inputs: model.inputs, outputs: model.outputs}));
"""


@needs_node
def test_compute_reuses_its_tensors(tiny: MLGraph, tmp_path: Path) -> None:
    module = to_javascript(tiny, "tiny").module
    got: Any = _run_check(module, COMPUTE_CHECK, tmp_path)
    # createTensor reads dataType, shape and the usage (a descriptor ignores other members)
    assert [{k: d[k] for k in ("dataType", "shape", "writable", "readable") if k in d}
            for d in got["created"]] == [
        {"dataType": "float32", "shape": [1, 3, 16, 16], "writable": True},
        {"dataType": "float32", "shape": [1, 10], "readable": True}]
    assert got["written"] == [[0, 1], [0, 2]] and got["dispatches"] == 2
    assert got["a"] == [1] * 10 and got["b"] == [2] * 10 and got["type"] == "Float32Array"
    assert 'compute: no value for input "image"' in got["missing"]
    assert got["destroyed"] == ["graph", 0, 1]
    assert got["inputs"] == [{"name": "image", "dataType": "float32", "shape": [1, 3, 16, 16]}]
    assert [o["name"] for o in got["outputs"]] == ["probs"]
