"""Rule widen-io (converter.passes.targets.rules_io): graph inputs and outputs of a type a limits file
lacks at the top level (int8 here, as Core ML's `input` / `output` limits lack it) carried in
int32. The lowered graph fits the limits (check_graph), feeds and results keep the model's
own type, and the values match onnxruntime on the original ONNX model and a float64 numpy
oracle of the spec's quantizeLinear / dequantizeLinear; the generated JavaScript converts
(run in node)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter.core.feeds import graph_feeds, source_outputs
from converter.core.ir import ValueInfo
from converter.core.webnn import ML, MLGraph, MLGraphBuilder
from converter.core.webnn.limits import op_support_limits
from converter.passes.targets import Target, load_target
from converter.passes.targets.check import check_graph
from converter.passes.targets.passes import lower
from tests.converter.io.export.node_harness import _run_check, needs_node

IO_TYPES = ["float32", "float16", "int32"]
X = np.arange(-128, 128, dtype=np.int8).reshape(16, 16)
SCALE_IN, ZERO_IN, SCALE_OUT, ZERO_OUT = 0.1, 3, 0.05, -2


def limits_file(folder: Path) -> Path:
    """The reference runtime's limits with graph inputs and outputs float16/float32/int32."""
    limits: dict[str, Any] = op_support_limits()
    for key in ("input", "output"):
        limits[key] = dict(limits[key], dataTypes=IO_TYPES)
    path = folder / "io32.json"
    path.write_text(json.dumps(limits), encoding="utf-8")
    return path


@pytest.fixture()
def io32(tmp_path: Path) -> Target:
    return load_target(limits_file(tmp_path))


def _oracle(x: np.ndarray) -> np.ndarray:
    """dequantizeLinear, relu, quantizeLinear (round half to even, saturate) in float64."""
    v = np.maximum((x.astype(np.float64) - ZERO_IN) * SCALE_IN, 0.0)
    return np.clip(np.round(v / SCALE_OUT) + ZERO_OUT, -128, 127).astype(np.int8)


def _graph() -> MLGraph:
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=list(X.shape), data_type="int8")
    f = b.dequantize_linear(x, b.constant(np.full((1, 1), SCALE_IN, np.float32)),
                            b.constant(np.full((1, 1), ZERO_IN, np.int8), "int8"))
    q = b.quantize_linear(b.relu(f), b.constant(np.full((1, 1), SCALE_OUT, np.float32)),
                          b.constant(np.full((1, 1), ZERO_OUT, np.int8), "int8"))
    return b.build({"y": q})


def test_int8_io_carried_in_int32(io32: Target) -> None:
    graph = _graph()
    assert {v.kind for v in check_graph(graph, io32)} == {"input", "output"}
    lowered = lower(graph, io32)
    assert [v.line() for v in check_graph(lowered.graph, io32)] == []
    g = lowered.graph
    assert g.inputs["x"].data_type == "int32" and g.outputs["y"].data_type == "int32"
    assert g.narrowed_inputs == {"x": "int8"} and g.narrowed_outputs == {"y": "int8"}
    assert any("rule widen-io" in n for n in lowered.notes), lowered.notes
    # the notes name the callers' type, not only the carrier (was "graph input given as int32")
    assert any("input 'x': int8 graph input given as int32" in n for n in lowered.notes)
    assert any("output 'y': int8 graph output returned as int32" in n for n in lowered.notes)
    infos = [ValueInfo("x", "int8", X.shape)]
    feeds = graph_feeds(g, infos, {"x": X})
    assert feeds["x"].dtype == np.int32
    np.testing.assert_array_equal(feeds["x"], X.astype(np.int32))
    raw = g.context.compute(g, feeds)
    got = source_outputs([ValueInfo("y", "int8", X.shape)], raw)["y"]
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, _oracle(X))


def test_target_with_int8_io_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "all.json"
    path.write_text(json.dumps(op_support_limits()), encoding="utf-8")
    graph = _graph()
    assert lower(graph, load_target(path)).graph is graph


def qdq_model(path: Path) -> Path:
    """ONNX: int8 x -> DequantizeLinear -> Relu -> QuantizeLinear -> int8 y."""
    from onnx import TensorProto, helper, save

    inits = [helper.make_tensor("si", TensorProto.FLOAT, [], [SCALE_IN]),
             helper.make_tensor("zi", TensorProto.INT8, [], [ZERO_IN]),
             helper.make_tensor("so", TensorProto.FLOAT, [], [SCALE_OUT]),
             helper.make_tensor("zo", TensorProto.INT8, [], [ZERO_OUT])]
    nodes = [helper.make_node("DequantizeLinear", ["x", "si", "zi"], ["f"]),
             helper.make_node("Relu", ["f"], ["r"]),
             helper.make_node("QuantizeLinear", ["r", "so", "zo"], ["y"])]
    graph = helper.make_graph(
        nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.INT8, list(X.shape))],
        [helper.make_tensor_value_info("y", TensorProto.INT8, list(X.shape))], inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
         str(path))
    return path


def test_run_and_validate_against_onnxruntime(tmp_path: Path) -> None:
    ort = pytest.importorskip("onnxruntime")
    from converter.api import convert
    from converter.validate import validate

    model = qdq_model(tmp_path / "qdq.onnx")
    limits = limits_file(tmp_path)
    result = convert(model, target=limits)
    assert result.graph.input_descriptors["x"].data_type == "int32"
    assert check_graph(result.graph, load_target(limits)) == []
    got = result.run({"x": X})["y"]
    want = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"]).run(
        None, {"x": X})[0]
    assert got.dtype == want.dtype == np.int8
    np.testing.assert_array_equal(got, want)
    report = validate(str(model), inputs={"x": X}, target=str(limits))
    assert report.passed and not report.target_violations


_JS_CHECK = """
const mod = await import(process.argv[2]);
const x = mod.INPUTS.find((d) => d.name === "x");
const y = mod.OUTPUTS.find((d) => d.name === "y");
const fed = mod.narrowInput(x, Int8Array.from({length: 256}, (_, i) => i - 128));
const back = mod.widenOutput(y, Int32Array.from({length: 256}, (_, i) => 127 - i).buffer);
console.log(JSON.stringify({x, y, fedType: fed.constructor.name, fed: Array.from(fed),
                            backType: back.constructor.name, back: Array.from(back)}));
"""


@needs_node
def test_javascript_converts_int8_inputs_and_outputs(io32: Target, tmp_path: Path) -> None:
    """The generated module (run in node) takes an Int8Array for the input carried in int32
    and gives the output back as an Int8Array."""
    from converter.io.export.javascript import to_javascript

    files = to_javascript(lower(_graph(), io32).graph, "model")
    got = _run_check(files.module, _JS_CHECK, tmp_path)
    assert got["x"] == {"name": "x", "dataType": "int32", "shape": [16, 16],
                        "sourceDataType": "int8"}
    assert got["y"]["sourceDataType"] == "int8"
    assert got["fedType"] == "Int32Array" and got["fed"] == list(range(-128, 128))
    assert got["backType"] == "Int8Array" and got["back"] == list(range(127, -129, -1))
