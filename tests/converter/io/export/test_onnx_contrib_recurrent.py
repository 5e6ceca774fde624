"""The onnxruntime backend's GRU / LSTM re-fusion (converter/runtimes/onnxruntime/lowering/
recurrent_fusion.py): ONNX GRU / LSTM nodes that WebNN's gru / lstm cannot express
(HardSigmoid and other ONNX activations, peepholes, clip) are converted (the importer unrolls
them), the WebNN graph is lowered with and without `contrib_ops`, and both lowerings run in
onnxruntime next to onnxruntime on the original node (the oracle: an independent
implementation of the ONNX operator). The fused lowering holds one GRU / LSTM node and a few
reshapes; the unfused one holds none; forms the fusion refuses stay unrolled and correct."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest

import converter
from converter.runtimes.onnxruntime.to_onnx import to_onnx
from tests.converter.io.export.onnx_run import op_counts, run_onnx
from tests.op_mappings.onnx.harness import node_model

B, IN = 2, 5
RNG = np.random.default_rng(11)


def _model(kind: str, steps: int, hidden: int, attrs: dict[str, Any], *, h0: bool = True,
           c0: bool = True, bias: bool = True, peepholes: bool = False,
           outputs: tuple[str, ...] | None = None
           ) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[kind]
    dirs = 2 if attrs.get("direction") == "bidirectional" else 1
    x = RNG.normal(0, 1, (steps, B, IN)).astype(np.float32)
    w = RNG.normal(0, 0.5, (dirs, gates * hidden, IN)).astype(np.float32)
    r = RNG.normal(0, 0.5, (dirs, gates * hidden, hidden)).astype(np.float32)
    b = RNG.normal(0, 0.3, (dirs, 2 * gates * hidden)).astype(np.float32)
    state = [dirs, B, hidden]
    inputs: list[tuple[str, np.ndarray | None]] = [
        ("x", x), ("w", w), ("r", r), ("b", b if bias else None), ("lens", None),
        ("h0", RNG.normal(0, 1, state).astype(np.float32) if h0 else None)]
    if kind == "LSTM":
        inputs.append(("c0", RNG.normal(0, 1, state).astype(np.float32) if c0 else None))
        p = RNG.normal(0, 0.5, (dirs, 3 * hidden)).astype(np.float32)
        inputs.append(("p", p if peepholes else None))
    while inputs[-1][1] is None:
        inputs.pop()
    if outputs is None:
        outputs = ("y", "y_h", "y_c") if kind == "LSTM" else ("y", "y_h")
    model = node_model(kind, inputs, {"hidden_size": hidden, **attrs}, outputs=outputs,
                       constants=["w", "r", "b", "p"], opset=14)
    feeds = {n: a for n, a in inputs if a is not None and n not in ("w", "r", "b", "p")}
    return model, feeds


def _check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], kind: str,
           fused_expected: bool = True) -> None:
    want = run_onnx(model, feeds)
    graph = converter.convert(model, target="spec").graph
    fused, plain = to_onnx(graph, contrib_ops=True), to_onnx(graph)
    assert op_counts(plain)[kind] == 0  # the importer unrolled it
    for lowered in (fused, plain):
        got = run_onnx(lowered, feeds)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, atol=2e-5, rtol=1e-5)
    ops = op_counts(fused)
    if fused_expected:
        assert ops[kind] == 1
        assert sum(ops.values()) - ops[kind] - ops["Reshape"] == 0, ops
        assert ops["Reshape"] <= 4, ops
    else:
        assert ops[kind] == 0
    assert not any(n.domain for n in plain.graph.node)  # the standard export: standard ops


HS: dict[str, Any] = {"activations": ["HardSigmoid", "Tanh"], "activation_alpha": [0.2],
      "activation_beta": [0.5]}


@pytest.mark.parametrize("lbr", [0, 1])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("steps", [1, 4])
def test_gru_hardsigmoid_is_fused(lbr: int, direction: str, steps: int) -> None:
    acts = HS if direction != "bidirectional" else {  # onnxruntime wants both directions'
        "activations": HS["activations"] * 2, "activation_alpha": [0.2, 0.2],
        "activation_beta": [0.5, 0.5]}
    attrs = {**acts, "linear_before_reset": lbr, "direction": direction}
    model, feeds = _model("GRU", steps, 6, attrs)
    _check(model, feeds, "GRU")


def test_gru_bidirectional_with_different_activations_is_two_nodes() -> None:
    attrs = {"activations": ["HardSigmoid", "Tanh", "HardSigmoid", "Relu"],
             "activation_alpha": [0.3, 0.25], "activation_beta": [0.4, 0.45],
             "direction": "bidirectional"}
    model, feeds = _model("GRU", 3, 4, attrs)
    want = run_onnx(model, feeds)
    fused = to_onnx(converter.convert(model, target="spec").graph, contrib_ops=True)
    assert op_counts(fused)["GRU"] == 2
    for g, w in zip(run_onnx(fused, feeds), want, strict=True):
        np.testing.assert_allclose(g, w, atol=2e-5, rtol=1e-5)


@pytest.mark.parametrize("acts", [
    {"activations": ["LeakyRelu", "Tanh"], "activation_alpha": [0.1]},
    {"activations": ["Affine", "Elu"], "activation_alpha": [0.3, 0.9],
     "activation_beta": [0.2]},
    {"activations": ["Softsign", "Softplus"]},
    {"activations": ["HardSigmoid", "Tanh"], "clip": 0.7},
], ids=["leakyrelu", "affine_elu", "softsign_softplus", "clip"])
def test_gru_other_activations_are_fused(acts: dict[str, Any]) -> None:
    model, feeds = _model("GRU", 3, 5, acts, bias=False, h0=False)
    _check(model, feeds, "GRU")


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("steps", [1, 5])
@pytest.mark.parametrize("states", [True, False], ids=["states", "no_states"])
def test_lstm_peepholes_are_fused(direction: str, steps: int, states: bool) -> None:
    model, feeds = _model("LSTM", steps, 6, {"direction": direction}, peepholes=True,
                          h0=states, c0=states)
    _check(model, feeds, "LSTM")


@pytest.mark.parametrize("acts", [
    {"activations": ["HardSigmoid", "Tanh", "Tanh"]},
    {"activations": ["Sigmoid", "Tanh", "Tanh"], "clip": 0.5},
    {"activations": ["Sigmoid", "Softsign", "Relu"]},
], ids=["hardsigmoid", "clip", "softsign_relu"])
def test_lstm_activations_are_fused(acts: dict[str, Any]) -> None:
    model, feeds = _model("LSTM", 3, 4, acts, bias=False)
    _check(model, feeds, "LSTM")


def test_lstm_sequence_only() -> None:
    model, feeds = _model("LSTM", 3, 4, {"direction": "bidirectional"}, peepholes=True,
                          outputs=("y",))
    _check(model, feeds, "LSTM")


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("steps", [1, 4])
@pytest.mark.parametrize("acts", [{}, {"activations": ["Relu"], "clip": 1.5}],
                         ids=["tanh", "relu_clip"])
def test_rnn_is_fused(direction: str, steps: int, acts: dict[str, Any]) -> None:
    attrs = {**acts, "direction": direction}
    if direction == "bidirectional":  # onnxruntime wants both directions'
        attrs["activations"] = acts.get("activations", ["Tanh"]) * 2
    model, feeds = _model("RNN", steps, 6, attrs, bias=steps == 4, h0=steps == 1)
    _check(model, feeds, "RNN")


def test_lstm_input_forget_stays_unrolled() -> None:
    model, feeds = _model("LSTM", 3, 4, {"input_forget": 1}, peepholes=True)
    _check(model, feeds, "LSTM", fused_expected=False)


def test_gru_with_a_state_read_elsewhere_stays_correct() -> None:
    """A graph reading an intermediate state: the fused node gives the outputs, the
    unrolled steps still compute the state the other reader needs."""
    model, feeds = _model("GRU", 4, 5, HS)
    node = model.graph.node[0]
    extra = onnx.helper.make_node("Slice", ["y", "starts", "ends"], ["y1"])
    model.graph.initializer.extend([onnx.numpy_helper.from_array(np.array([1], np.int64), n)
                                    for n in ("starts",)])
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.array([2], np.int64),
                                                                "ends"))
    model.graph.node.append(extra)
    model.graph.output.append(onnx.ValueInfoProto(name="y1"))
    assert node.op_type == "GRU"
    want = run_onnx(model, feeds)
    fused = to_onnx(converter.convert(model, target="spec").graph, contrib_ops=True)
    for g, w in zip(run_onnx(fused, feeds), want, strict=True):
        np.testing.assert_allclose(g, w, atol=2e-5, rtol=1e-5)
