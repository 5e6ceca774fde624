"""ONNX RNN / GRU / LSTM vs onnxruntime: every activation, clip, linear_before_reset,
directions with per-direction activations, peepholes, input_forget, initial states,
sequence_lens, layout 1; native vs decomposed in the report."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import converter
from converter.core.errors import ConversionFailed
from tests.op_mappings.onnx.harness import (
    assert_close,
    check_node,
    node_model,
    rand,
    run_ort,
    statuses,
)

S, B, I, H = 3, 2, 4, 3  # noqa: E741
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _inputs(op: str, dirs: int = 1, *, bias: bool = True, h0: bool = False, c0: bool = False,
            peep: np.ndarray | None = None, lens: np.ndarray | None = None, layout: int = 0,
            dtype: str = "float32") -> list[tuple[str, Any]]:
    g = GATES[op]
    x = rand(B, S, I, seed=1) if layout else rand(S, B, I, seed=1)
    state = (B, dirs, H) if layout else (dirs, B, H)
    items: list[tuple[str, Any]] = [
        ("x", x.astype(dtype)),
        ("W", rand(dirs, g * H, I, seed=2, low=-0.6, high=0.6).astype(dtype)),
        ("R", rand(dirs, g * H, H, seed=3, low=-0.6, high=0.6).astype(dtype)),
        ("B", rand(dirs, 2 * g * H, seed=4, low=-0.5, high=0.5).astype(dtype) if bias else None),
        ("lens", lens),
        ("h0", rand(*state, seed=5, low=-1, high=1).astype(dtype) if h0 else None)]
    if op == "LSTM":
        items.append(("c0", rand(*state, seed=6, low=-1, high=1).astype(dtype) if c0 else None))
        items.append(("P", peep))
    return items


def _outs(op: str) -> tuple[str, ...]:
    return ("y", "yh", "yc") if op == "LSTM" else ("y", "yh")


def _run(op: str, attrs: dict[str, Any], items: list[tuple[str, Any]], *, opset: int = 14,
         constants: tuple[str, ...] = ("W", "R", "B", "lens", "P"),
         outputs: tuple[str, ...] | None = None, rtol: float = 1e-5,
         atol: float = 1e-5) -> converter.ConversionResult:
    return check_node(op, items, {"hidden_size": H, **attrs}, opset=opset,
                      outputs=outputs or _outs(op), constants=constants, rtol=rtol, atol=atol)


ALL_ACTS = [("Relu", []), ("Tanh", []), ("Sigmoid", []), ("Affine", [0.7, 0.1]),
            ("LeakyRelu", [0.3]), ("ThresholdedRelu", [0.2]), ("ScaledTanh", [0.8, 1.3]),
            ("HardSigmoid", [0.3, 0.4]), ("Elu", [0.9]), ("Softsign", []), ("Softplus", [])]


def _alpha_beta(acts: list[tuple[str, list[float]]]) -> dict[str, Any]:
    alphas, betas = [], []
    for _name, params in acts:
        if params:
            alphas.append(params[0])
        if len(params) > 1:
            betas.append(params[1])
    out: dict[str, Any] = {"activations": [n for n, _ in acts]}
    if alphas:
        out["activation_alpha"] = alphas
    if betas:
        out["activation_beta"] = betas
    return out


@pytest.mark.parametrize("act", ALL_ACTS, ids=[a for a, _ in ALL_ACTS])
def test_rnn_every_activation(act: tuple[str, list[float]]) -> None:
    res = _run("RNN", _alpha_beta([act]), _inputs("RNN", h0=True))
    assert statuses(res)["RNN"] == ["decomposed"]


@pytest.mark.parametrize("act", ALL_ACTS, ids=[a for a, _ in ALL_ACTS])
def test_gru_every_activation(act: tuple[str, list[float]]) -> None:
    _run("GRU", _alpha_beta([act, ("Tanh", [])]), _inputs("GRU"))
    _run("GRU", _alpha_beta([("Sigmoid", []), act]), _inputs("GRU"))


@pytest.mark.parametrize("act", ALL_ACTS, ids=[a for a, _ in ALL_ACTS])
def test_lstm_every_activation(act: tuple[str, list[float]]) -> None:
    _run("LSTM", _alpha_beta([act, ("Tanh", []), ("Tanh", [])]), _inputs("LSTM"))
    _run("LSTM", _alpha_beta([("Sigmoid", []), act, act]), _inputs("LSTM"))


def test_activation_defaults() -> None:
    _run("RNN", {"activations": ["LeakyRelu"]}, _inputs("RNN"))
    _run("RNN", {"activations": ["HardSigmoid"]}, _inputs("RNN"))
    _run("GRU", {"activations": ["Elu", "ThresholdedRelu"]}, _inputs("GRU"))


@pytest.mark.parametrize("op", ["GRU", "LSTM"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("lbr", [0, 1])
def test_native(op: str, direction: str, lbr: int) -> None:
    if op == "LSTM" and lbr:
        pytest.skip("linear_before_reset is GRU only")
    attrs: dict[str, Any] = {"direction": direction}
    if op == "GRU":
        attrs["linear_before_reset"] = lbr
    dirs = 2 if direction == "bidirectional" else 1
    res = _run(op, attrs, _inputs(op, dirs, h0=True, c0=True))
    st = statuses(res)[op]
    assert st == ["native"], st
    assert res.report.to_dict()["ops"][op]["webnn_ops"] == [op.lower()]


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("lbr", [0, 1])
def test_clip_bidirectional_mixed_activations(op: str, lbr: int) -> None:
    per = {"RNN": [["Relu"], ["Softsign"]],
           "GRU": [["HardSigmoid", "Tanh"], ["Sigmoid", "Elu"]],
           "LSTM": [["Sigmoid", "Tanh", "Softsign"], ["HardSigmoid", "Relu", "Tanh"]]}[op]
    attrs: dict[str, Any] = {"direction": "bidirectional", "clip": 0.7,
                             "activations": per[0] + per[1]}
    if op == "GRU":
        attrs["linear_before_reset"] = lbr
    res = _run(op, attrs, _inputs(op, 2, h0=True, c0=True))
    assert statuses(res)[op] == ["decomposed"]


@pytest.mark.parametrize("op", ["GRU", "LSTM"])
def test_gru_lstm_decomposed_same_as_native_path(op: str) -> None:
    # different activations per direction force the decomposition with default gates
    acts = {"GRU": ["Sigmoid", "Tanh", "Sigmoid", "Relu"],
            "LSTM": ["Sigmoid", "Tanh", "Tanh", "Sigmoid", "Tanh", "Relu"]}[op]
    res = _run(op, {"direction": "bidirectional", "activations": acts},
               _inputs(op, 2, h0=True, c0=True, bias=False))
    assert statuses(res)[op] == ["decomposed"]


@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
@pytest.mark.parametrize("po_zero", [True, False])
def test_lstm_peepholes(direction: str, po_zero: bool) -> None:
    dirs = 2 if direction == "bidirectional" else 1
    p = rand(dirs, 3 * H, seed=9, low=-0.8, high=0.8)
    if po_zero:
        p[:, H:2 * H] = 0
    res = _run("LSTM", {"direction": direction}, _inputs("LSTM", dirs, peep=p, c0=True))
    assert statuses(res)["LSTM"] == (["native"] if po_zero else ["decomposed"])


def test_lstm_peephole_not_constant_decomposes() -> None:
    p = rand(1, 3 * H, seed=9, low=-0.8, high=0.8)
    res = _run("LSTM", {}, _inputs("LSTM", peep=p, c0=True),
               constants=("W", "R", "B", "lens"))
    assert statuses(res)["LSTM"] == ["decomposed"]


@pytest.mark.parametrize("peep", [False, True])
def test_lstm_input_forget(peep: bool) -> None:
    p = rand(1, 3 * H, seed=9, low=-0.8, high=0.8) if peep else None
    res = _run("LSTM", {"input_forget": 1}, _inputs("LSTM", peep=p, h0=True, c0=True))
    assert statuses(res)["LSTM"] == ["decomposed"]


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_layout_1(op: str, direction: str) -> None:
    """onnxruntime has no layout 1: the oracle is the layout-0 model on transposed data."""
    dirs = 2 if direction == "bidirectional" else 1
    items = _inputs(op, dirs, h0=True, c0=True, layout=1)
    attrs = {"hidden_size": H, "direction": direction}
    consts = ("W", "R", "B")
    batch_first = {k: v for k, v in items if v is not None}
    time_first = {"x": batch_first["x"].transpose(1, 0, 2),
                  "h0": batch_first["h0"].transpose(1, 0, 2)}
    if op == "LSTM":
        time_first["c0"] = batch_first["c0"].transpose(1, 0, 2)
    ref_items = [(k, time_first.get(k, v)) for k, v in items]
    ref_model = node_model(op, ref_items, attrs, opset=14, outputs=_outs(op), constants=consts)
    expected = run_ort(ref_model, {k: v for k, v in time_first.items()})
    model = node_model(op, items, {**attrs, "layout": 1}, opset=14, outputs=_outs(op),
                       constants=consts)
    got = converter.convert(model).run({k: batch_first[k] for k in time_first})
    assert_close(got["y"], expected["y"].transpose(2, 0, 1, 3), 1e-5, 1e-5, "Y")
    for name in _outs(op)[1:]:
        assert_close(got[name], expected[name].transpose(1, 0, 2), 1e-5, 1e-5, name)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_non_constant_weights_and_bias(op: str) -> None:
    _run(op, {"direction": "bidirectional", "linear_before_reset": 1} if op == "GRU"
         else {"direction": "bidirectional"}, _inputs(op, 2, h0=True), constants=())


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_sequence_lens_equal_to_length(op: str) -> None:
    _run(op, {}, _inputs(op, lens=np.full(B, S, np.int32)))


def test_sequence_lens_variable_rejected() -> None:
    items = _inputs("GRU", lens=np.array([S, 1], np.int32))
    model = node_model("GRU", items, {"hidden_size": H}, opset=14, outputs=("y", "yh"),
                       constants=("W", "R", "B", "lens"))
    with pytest.raises(ConversionFailed, match="sequence_lens"):
        converter.convert(model)


@pytest.mark.parametrize("op", ["GRU", "LSTM"])
@pytest.mark.parametrize("outputs", [("", "yh"), ("y",), ("", "", "yc")])
def test_omitted_outputs(op: str, outputs: tuple[str, ...]) -> None:
    if op == "GRU" and len(outputs) == 3:
        pytest.skip("GRU has two outputs")
    _run(op, {}, _inputs(op), outputs=outputs)


@pytest.mark.parametrize("opset", [7, 14, 22])
def test_opsets_and_float16(opset: int) -> None:
    _run("GRU", {"linear_before_reset": 1}, _inputs("GRU", h0=True), opset=min(opset, 21))
    if opset >= 14:
        res = _run("LSTM", {"clip": 1.5}, _inputs("LSTM", h0=True, c0=True, dtype="float16"),
                   opset=opset if opset < 22 else 21, rtol=5e-3, atol=5e-3)
        assert statuses(res)["LSTM"] == ["decomposed"]


@pytest.mark.parametrize("constants", [("W", "R", "B", "lens", "P"), ("lens",)],
                         ids=["constant-weights", "runtime-weights"])
@pytest.mark.parametrize("case", ["RNN", "GRU-hardsigmoid", "GRU-lbr-clip", "LSTM-peephole",
                                  "LSTM-input-forget"])
def test_bidirectional_stacked(case: str, constants: tuple[str, ...]) -> None:
    """Both directions of a decomposed bidirectional node run stacked (one batched matmul
    per step for both, the backward inputs and outputs reversed in time): every kind, with
    initial states, constant and runtime weights, and the Y output omitted."""
    op = case.split("-")[0]
    attrs: dict[str, Any] = {"direction": "bidirectional"}
    peep = None
    if case == "GRU-hardsigmoid":
        attrs |= {"activations": ["HardSigmoid", "Tanh"] * 2, "activation_alpha": [0.3, 0.3],
                  "activation_beta": [0.4, 0.4]}
    elif case == "GRU-lbr-clip":
        attrs |= {"linear_before_reset": 1, "clip": 0.8}
    elif case == "LSTM-peephole":
        peep = rand(2, 3 * H, seed=8, low=-0.5, high=0.5)
    elif case == "LSTM-input-forget":
        attrs |= {"input_forget": 1}
    items = _inputs(op, 2, h0=True, c0=True, peep=peep)
    res = _run(op, attrs, items, constants=constants)
    assert statuses(res)[op] == ["decomposed"]
    ops = [o.op for o in res.graph.operations]
    assert "reverse" in ops and "matmul" in ops  # the stacked form, not one loop per direction
    _run(op, attrs, items, constants=constants, outputs=("", "yh"))
