"""Carried state (issue 24, point 3) in Python: a micro-wakeword-style TFLite model with a
resource-variable ring buffer against LiteRT's persistent interpreter, and streaming ONNX
models (an RNN cell `h0` -> `hn`, silero-vad `state` -> `stateN`) against onnxruntime fed its
own state outputs, over sequences of 12 calls, on the reference and onnxruntime backends."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import converter
from converter.core.errors import InvalidModel
from tests.converter.frontends.tflite.streaming import (
    FRAME,
    WINDOW,
    frames,
    litert_sequence,
    streaming_model,
)

CALLS = 12


def _max_abs(ours: list[np.ndarray], ref: list[np.ndarray]) -> float:
    return max(float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))
               for a, b in zip(ours, ref, strict=True))


@pytest.fixture(scope="module")
def streaming() -> bytes:
    pytest.importorskip("ai_edge_litert.interpreter")
    return streaming_model()


def test_tflite_resource_variable_becomes_a_state_pair(streaming: bytes) -> None:
    result = converter.convert(streaming)
    (pair,) = result.state
    assert (pair.input, pair.output) == ("stream/ring_buffer", "new_state")
    assert pair.initial.shape == (1, WINDOW - 1, FRAME) and np.all(pair.initial == 0.25)
    assert result.input_names == ["features"] and result.output_names == ["prob"]
    assert set(result.graph.inputs) == {"features", "stream/ring_buffer"}
    assert set(result.graph.outputs) == {"prob", "new_state"}
    assert not any("stateless" in w for w in result.report.warnings)
    assert any(w.startswith("carried state: stream/ring_buffer <- new_state")
               for w in result.report.warnings)


@pytest.mark.parametrize("backend", ["reference", "onnxruntime"])
def test_tflite_sequence_matches_litert(streaming: bytes, backend: str) -> None:
    inputs = frames(CALLS)
    ref = litert_sequence(streaming, inputs)
    fresh = [litert_sequence(streaming, [x])[0] for x in inputs]
    assert _max_abs(fresh[1:], ref[1:]) > 1e-3  # the state matters: a stateless run differs
    result = converter.convert(streaming)
    session = result.compile(backend)
    ours = [session.run({"features": x})["prob"] for x in inputs]
    assert _max_abs(ours, ref) <= 1e-5
    session.reset_state()
    again = [session.run({"features": x})["prob"] for x in inputs]
    assert _max_abs(again, ref) <= 1e-5
    via_result = [result.run({"features": x}, backend)["prob"] for x in inputs]
    assert _max_abs(via_result, ref) <= 1e-5
    result.reset_state()
    assert _max_abs([result.run({"features": inputs[0]}, backend)["prob"]], ref[:1]) <= 1e-5


def test_state_inputs_may_be_given(streaming: bytes) -> None:
    """A caller who gives the state input decides it; the run's state output is carried on;
    unknown inputs are still refused."""
    result = converter.convert(streaming)
    session = result.compile()
    inputs = frames(3)
    ref = litert_sequence(streaming, inputs)
    start = np.full((1, WINDOW - 1, FRAME), 0.25, np.float32)
    first = session.run({"features": inputs[0], "stream/ring_buffer": start})["prob"]
    np.testing.assert_allclose(first, ref[0], atol=1e-5)
    np.testing.assert_allclose(session.run({"features": inputs[1]})["prob"], ref[1], atol=1e-5)
    with pytest.raises(InvalidModel, match="state inputs"):
        session.run({"features": inputs[2], "nope": start})
    with pytest.raises(InvalidModel, match="missing \\['features'\\]"):
        session.run({})


def _rnn_cell() -> onnx.ModelProto:
    """x [1, 4], h0 [1, 6] -> hn = tanh(x W + h0 U + b), y = hn V: one step of an RNN, its
    hidden state an input/output pair."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.normal(0, 0.5, s).astype(np.float32), n)
             for n, s in (("W", (4, 6)), ("U", (6, 6)), ("b", (6,)), ("V", (6, 2)))]
    nodes = [helper.make_node("MatMul", ["x", "W"], ["xw"]),
             helper.make_node("MatMul", ["h0", "U"], ["hu"]),
             helper.make_node("Add", ["xw", "hu"], ["s"]),
             helper.make_node("Add", ["s", "b"], ["sb"]),
             helper.make_node("Tanh", ["sb"], ["hn"]),
             helper.make_node("MatMul", ["hn", "V"], ["y"])]
    graph = helper.make_graph(
        nodes, "rnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]),
                       helper.make_tensor_value_info("h0", TensorProto.FLOAT, [1, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2]),
         helper.make_tensor_value_info("hn", TensorProto.FLOAT, [1, 6])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("backend", ["reference", "onnxruntime"])
def test_onnx_state_pair_matches_onnxruntime_fed_back(backend: str) -> None:
    model = _rnn_cell()
    result = converter.convert(model)
    (pair,) = result.state
    assert (pair.input, pair.output, pair.source) == ("h0", "hn", "input/output pair")
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    xs = [rng.normal(0, 1, (1, 4)).astype(np.float32) for _ in range(CALLS)]
    h = np.zeros((1, 6), np.float32)
    ref = []
    for x in xs:
        y, h = sess.run(None, {"x": x, "h0": h})
        ref.append(y)
    session = result.compile(backend)
    ours = [session.run({"x": x})["y"] for x in xs]
    assert _max_abs(ours, ref) <= 1e-5
    explicit = result.compile(backend)  # giving h0 each call still works as before
    h = np.zeros((1, 6), np.float32)
    for x, want in zip(xs, ref, strict=True):
        out = explicit.run({"x": x, "h0": h})
        np.testing.assert_allclose(out["y"], want, atol=1e-5)
        h = out["hn"]


def _silero_file() -> Path:
    spec = importlib.util.find_spec("silero_vad")  # the file only: importing needs torch
    if spec is None or spec.origin is None:
        pytest.skip("silero-vad is not installed")
    path = Path(spec.origin).parent / "data" / "silero_vad.onnx"
    if not path.is_file():
        pytest.skip("silero-vad ships no silero_vad.onnx")
    return path


def test_silero_vad_sequence_matches_onnxruntime() -> None:
    path = _silero_file()
    sr = np.array(16000, np.int64)
    result = converter.convert(path, input_shapes={"input": [1, 512], "state": [2, 1, 128]},
                               pin_inputs={"sr": sr})
    (pair,) = result.state
    assert (pair.input, pair.output) == ("state", "stateN")
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    chunks = [rng.normal(0, 0.1, (1, 512)).astype(np.float32) for _ in range(CALLS)]
    state = np.zeros((2, 1, 128), np.float32)
    ref = []
    for chunk in chunks:
        out, state = sess.run(None, {"input": chunk, "state": state, "sr": sr})
        ref.append(out)
    ours = [result.run({"input": chunk})["output"] for chunk in chunks]
    assert _max_abs(ours, ref) <= 1e-5


def test_stateless_models_have_no_state() -> None:
    model = _rnn_cell()
    model.graph.output[1].name = "h_last"  # no partner name: nothing carried
    model.graph.node[4].output[0] = "h_last"
    model.graph.node[5].input[0] = "h_last"
    result = converter.convert(model)
    assert result.state == () and result.compile().state == ()
    with pytest.raises(InvalidModel, match="missing \\['h0'\\]"):
        result.run({"x": np.zeros((1, 4), np.float32)})


def test_single_run_validation_starts_from_the_initial_state(streaming: bytes) -> None:
    """`validate` runs once, as LiteRT's first invoke does: the graph-only state input is
    fed its initial value (`ConversionResult.state_feeds`)."""
    from converter.validate import validate

    report = validate(streaming)
    assert report.passed, report.to_text() if hasattr(report, "to_text") else report
    result = converter.convert(streaming)
    (feed,) = result.state_feeds().values()
    assert np.all(feed == 0.25)


@pytest.mark.parametrize("backend", ["reference", "onnxruntime"])
def test_int8_streaming_model_matches_litert_exactly(backend: str) -> None:
    """micro-wakeword ships int8: the ring buffer is an int8 variable with the activations'
    quantization; over 12 calls the int8 scores equal LiteRT's."""
    pytest.importorskip("ai_edge_litert.interpreter")
    from tests.converter.frontends.tflite.streaming import int8_frames, quantized_streaming_model

    model = quantized_streaming_model()
    inputs = int8_frames(CALLS)
    ref = litert_sequence(model, inputs)
    result = converter.convert(model)
    (pair,) = result.state
    assert pair.initial.dtype == np.int8 and np.all(pair.initial == 10)
    session = result.compile(backend)
    ours = [session.run({"features": x})["score"] for x in inputs]
    assert all(o.dtype == np.int8 for o in ours)
    assert _max_abs(ours, ref) == 0
