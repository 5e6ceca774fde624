"""Validation of gru, gruCell, lstm, lstmCell: every spec TypeError rule, the recorded
options, output shapes, plus the limit samples."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from converter.core.webnn import ML, MLGraphBuilder, MLInvalidStateError, MLOperand, MLTypeError
from tests.converter.core.webnn.limit_samples import Sample

STEPS, BATCH, INPUT, HIDDEN = 2, 3, 4, 5
ALL_GRU = ("input", "weight", "recurrentWeight", "bias", "recurrentBias", "initialHiddenState")
ALL_GRU_CELL = ("input", "weight", "recurrentWeight", "hiddenState", "bias", "recurrentBias")
ALL_LSTM = ("input", "weight", "recurrentWeight", "bias", "recurrentBias", "peepholeWeight",
            "initialHiddenState", "initialCellState")
ALL_LSTM_CELL = ("input", "weight", "recurrentWeight", "hiddenState", "cellState", "bias",
                 "recurrentBias", "peepholeWeight")


def _in(b: MLGraphBuilder, shape: list[int], dtype: str = "float32") -> MLOperand:
    return b.input(f"i{len(b._input_names)}", shape, dtype)


# -- argument factories: valid calls with one piece overridable ---------------------------
def gru_call(b: MLGraphBuilder, t: dict[str, str] | None = None, d: int = 1,
             **over: Any) -> Any:
    t = t or {}
    args = {"input": _in(b, [STEPS, BATCH, INPUT], t.get("input", "float32")),
            "weight": _in(b, [d, 3 * HIDDEN, INPUT], t.get("weight", "float32")),
            "recurrent_weight": _in(b, [d, 3 * HIDDEN, HIDDEN],
                                    t.get("recurrentWeight", "float32")),
            "steps": STEPS, "hidden_size": HIDDEN,
            "bias": _in(b, [d, 3 * HIDDEN], t.get("bias", "float32")),
            "recurrent_bias": _in(b, [d, 3 * HIDDEN], t.get("recurrentBias", "float32")),
            "initial_hidden_state": _in(b, [d, BATCH, HIDDEN],
                                        t.get("initialHiddenState", "float32"))}
    args.update(over)
    pos = [args.pop(k) for k in ("input", "weight", "recurrent_weight", "steps", "hidden_size")]
    return b.gru(*pos, **args)


def gru_cell_call(b: MLGraphBuilder, t: dict[str, str] | None = None, **over: Any) -> Any:
    t = t or {}
    args = {"input": _in(b, [BATCH, INPUT], t.get("input", "float32")),
            "weight": _in(b, [3 * HIDDEN, INPUT], t.get("weight", "float32")),
            "recurrent_weight": _in(b, [3 * HIDDEN, HIDDEN], t.get("recurrentWeight",
                                                                   "float32")),
            "hidden_state": _in(b, [BATCH, HIDDEN], t.get("hiddenState", "float32")),
            "hidden_size": HIDDEN,
            "bias": _in(b, [3 * HIDDEN], t.get("bias", "float32")),
            "recurrent_bias": _in(b, [3 * HIDDEN], t.get("recurrentBias", "float32"))}
    args.update(over)
    pos = [args.pop(k) for k in ("input", "weight", "recurrent_weight", "hidden_state",
                                 "hidden_size")]
    return b.gru_cell(*pos, **args)


def lstm_call(b: MLGraphBuilder, t: dict[str, str] | None = None, d: int = 1,
              **over: Any) -> Any:
    t = t or {}
    args = {"input": _in(b, [STEPS, BATCH, INPUT], t.get("input", "float32")),
            "weight": _in(b, [d, 4 * HIDDEN, INPUT], t.get("weight", "float32")),
            "recurrent_weight": _in(b, [d, 4 * HIDDEN, HIDDEN],
                                    t.get("recurrentWeight", "float32")),
            "steps": STEPS, "hidden_size": HIDDEN,
            "bias": _in(b, [d, 4 * HIDDEN], t.get("bias", "float32")),
            "recurrent_bias": _in(b, [d, 4 * HIDDEN], t.get("recurrentBias", "float32")),
            "peephole_weight": _in(b, [d, 3 * HIDDEN], t.get("peepholeWeight", "float32")),
            "initial_hidden_state": _in(b, [d, BATCH, HIDDEN],
                                        t.get("initialHiddenState", "float32")),
            "initial_cell_state": _in(b, [d, BATCH, HIDDEN],
                                      t.get("initialCellState", "float32"))}
    args.update(over)
    pos = [args.pop(k) for k in ("input", "weight", "recurrent_weight", "steps", "hidden_size")]
    return b.lstm(*pos, **args)


def lstm_cell_call(b: MLGraphBuilder, t: dict[str, str] | None = None, **over: Any) -> Any:
    t = t or {}
    args = {"input": _in(b, [BATCH, INPUT], t.get("input", "float32")),
            "weight": _in(b, [4 * HIDDEN, INPUT], t.get("weight", "float32")),
            "recurrent_weight": _in(b, [4 * HIDDEN, HIDDEN], t.get("recurrentWeight",
                                                                   "float32")),
            "hidden_state": _in(b, [BATCH, HIDDEN], t.get("hiddenState", "float32")),
            "cell_state": _in(b, [BATCH, HIDDEN], t.get("cellState", "float32")),
            "hidden_size": HIDDEN,
            "bias": _in(b, [4 * HIDDEN], t.get("bias", "float32")),
            "recurrent_bias": _in(b, [4 * HIDDEN], t.get("recurrentBias", "float32")),
            "peephole_weight": _in(b, [3 * HIDDEN], t.get("peepholeWeight", "float32"))}
    args.update(over)
    pos = [args.pop(k) for k in ("input", "weight", "recurrent_weight", "hidden_state",
                                 "cell_state", "hidden_size")]
    return b.lstm_cell(*pos, **args)


SAMPLES: dict[str, Sample] = {
    "gru": Sample(lambda b, t: gru_call(b, t, return_sequence=True), groups=[ALL_GRU]),
    "gruCell": Sample(lambda b, t: gru_cell_call(b, t), groups=[ALL_GRU_CELL]),
    "lstm": Sample(lambda b, t: lstm_call(b, t, return_sequence=True), groups=[ALL_LSTM]),
    "lstmCell": Sample(lambda b, t: lstm_cell_call(b, t), groups=[ALL_LSTM_CELL]),
}

CALLS: dict[str, Callable[..., Any]] = {"gru": gru_call, "gruCell": gru_cell_call,
                                        "lstm": lstm_call, "lstmCell": lstm_cell_call}


@pytest.fixture
def b() -> MLGraphBuilder:
    return MLGraphBuilder(ML().create_context())


# -- valid calls ---------------------------------------------------------------------------
def test_gru_outputs_and_recorded_defaults(b: MLGraphBuilder) -> None:
    x = _in(b, [STEPS, BATCH, INPUT])
    w = _in(b, [1, 3 * HIDDEN, INPUT])
    r = _in(b, [1, 3 * HIDDEN, HIDDEN])
    outs = b.gru(x, w, r, STEPS, HIDDEN)
    assert isinstance(outs, list) and len(outs) == 1
    assert outs[0].shape == (1, BATCH, HIDDEN) and outs[0].data_type == "float32"
    op = outs[0].operator
    assert op is not None and op.op == "gru"
    assert op.args == (x, w, r, STEPS, HIDDEN)
    assert dict(op.options) == {"resetAfter": True, "returnSequence": False,
                                "direction": "forward", "layout": "zrn",
                                "activations": ["sigmoid", "tanh"]}


def test_gru_both_with_sequence(b: MLGraphBuilder) -> None:
    outs = gru_call(b, d=2, direction="both", return_sequence=True, reset_after=False,
                    layout="rzn", activations=("relu", "relu"), label="g")
    assert [o.shape for o in outs] == [(2, BATCH, HIDDEN), (STEPS, 2, BATCH, HIDDEN)]
    opts = outs[0].operator.options
    assert opts["direction"] == "both" and opts["layout"] == "rzn"
    assert opts["resetAfter"] is False and opts["activations"] == ["relu", "relu"]
    assert opts["label"] == "g"
    assert {"bias", "recurrentBias", "initialHiddenState"} <= set(opts)
    assert outs[1].operator is outs[0].operator and outs[1].index == 1


def test_gru_cell_output_and_defaults(b: MLGraphBuilder) -> None:
    out = gru_cell_call(b, bias=None, recurrent_bias=None, t={"input": "float16",
                                                              "weight": "float16",
                                                              "recurrentWeight": "float16",
                                                              "hiddenState": "float16"})
    assert isinstance(out, MLOperand)
    assert out.shape == (BATCH, HIDDEN) and out.data_type == "float16"
    assert dict(out.operator.options) == {"resetAfter": True, "layout": "zrn",
                                          "activations": ["sigmoid", "tanh"]}


def test_lstm_outputs_and_defaults(b: MLGraphBuilder) -> None:
    x = _in(b, [STEPS, BATCH, INPUT], "float16")
    outs = b.lstm(x, _in(b, [1, 4 * HIDDEN, INPUT], "float16"),
                  _in(b, [1, 4 * HIDDEN, HIDDEN], "float16"), STEPS, HIDDEN)
    assert [o.shape for o in outs] == [(1, BATCH, HIDDEN)] * 2
    assert all(o.data_type == "float16" for o in outs)
    assert dict(outs[0].operator.options) == {"returnSequence": False, "direction": "forward",
                                              "layout": "iofg",
                                              "activations": ["sigmoid", "tanh", "tanh"]}
    seq = lstm_call(b, d=2, direction="both", return_sequence=True, layout="ifgo")
    assert [o.shape for o in seq] == [(2, BATCH, HIDDEN), (2, BATCH, HIDDEN),
                                      (STEPS, 2, BATCH, HIDDEN)]


def test_lstm_cell_outputs(b: MLGraphBuilder) -> None:
    outs = lstm_cell_call(b, layout="ifgo", activations=["tanh", "relu", "sigmoid"])
    assert isinstance(outs, list) and [o.shape for o in outs] == [(BATCH, HIDDEN)] * 2
    opts = outs[0].operator.options
    assert opts["layout"] == "ifgo" and opts["activations"] == ["tanh", "relu", "sigmoid"]
    assert {"bias", "recurrentBias", "peepholeWeight"} <= set(opts)


# -- data types and ranks ------------------------------------------------------------------
@pytest.mark.parametrize("op", list(CALLS))
def test_integer_input_rejected(b: MLGraphBuilder, op: str) -> None:
    roles = {"gru": ALL_GRU, "gruCell": ALL_GRU_CELL, "lstm": ALL_LSTM,
             "lstmCell": ALL_LSTM_CELL}[op]
    with pytest.raises(MLTypeError, match=f"{op}: input data type int32"):
        CALLS[op](b, {r: "int32" for r in roles})


@pytest.mark.parametrize("op", list(CALLS))
def test_every_operand_must_match_input_type(op: str) -> None:
    roles = {"gru": ALL_GRU, "gruCell": ALL_GRU_CELL, "lstm": ALL_LSTM,
             "lstmCell": ALL_LSTM_CELL}[op]
    for role in roles[1:]:
        b = MLGraphBuilder(ML().create_context())
        with pytest.raises(MLTypeError, match=f"{op}: {role} data type float16 must equal "
                                              "input data type float32"):
            CALLS[op](b, {role: "float16"})


@pytest.mark.parametrize(("op", "key", "shape", "role"), [
    ("gru", "input", [STEPS, BATCH, INPUT, 1], "input"),
    ("gru", "weight", [3 * HIDDEN, INPUT], "weight"),
    ("gru", "recurrent_weight", [1, 1, 3 * HIDDEN, HIDDEN], "recurrentWeight"),
    ("gru", "bias", [3 * HIDDEN], "bias"),
    ("gru", "recurrent_bias", [1, 1, 3 * HIDDEN], "recurrentBias"),
    ("gru", "initial_hidden_state", [BATCH, HIDDEN], "initialHiddenState"),
    ("gruCell", "input", [1, BATCH, INPUT], "input"),
    ("gruCell", "hidden_state", [HIDDEN], "hiddenState"),
    ("gruCell", "bias", [1, 3 * HIDDEN], "bias"),
    ("lstm", "input", [BATCH, INPUT], "input"),
    ("lstm", "peephole_weight", [3 * HIDDEN], "peepholeWeight"),
    ("lstm", "initial_cell_state", [1, 1, BATCH, HIDDEN], "initialCellState"),
    ("lstmCell", "cell_state", [1, BATCH, HIDDEN], "cellState"),
    ("lstmCell", "peephole_weight", [1, 3 * HIDDEN], "peepholeWeight"),
    ("lstmCell", "recurrent_bias", [1, 4 * HIDDEN], "recurrentBias"),
])
def test_wrong_rank(b: MLGraphBuilder, op: str, key: str, shape: list[int], role: str) -> None:
    with pytest.raises(MLTypeError, match=f"{op}: {role} rank {len(shape)} is outside"):
        CALLS[op](b, **{key: _in(b, shape)})


# -- shapes --------------------------------------------------------------------------------
@pytest.mark.parametrize(("op", "key", "shape", "role"), [
    ("gru", "weight", [1, 3 * HIDDEN, INPUT + 1], "weight"),
    ("gru", "weight", [1, 4 * HIDDEN, INPUT], "weight"),
    ("gru", "weight", [2, 3 * HIDDEN, INPUT], "weight"),
    ("gru", "recurrent_weight", [1, 3 * HIDDEN, HIDDEN + 1], "recurrentWeight"),
    ("gru", "bias", [1, 3 * HIDDEN + 1], "bias"),
    ("gru", "bias", [2, 3 * HIDDEN], "bias"),
    ("gru", "recurrent_bias", [1, 2 * HIDDEN], "recurrentBias"),
    ("gru", "initial_hidden_state", [1, BATCH + 1, HIDDEN], "initialHiddenState"),
    ("gru", "initial_hidden_state", [2, BATCH, HIDDEN], "initialHiddenState"),
    ("gruCell", "weight", [3 * HIDDEN, INPUT + 1], "weight"),
    ("gruCell", "recurrent_weight", [3 * HIDDEN, HIDDEN - 1], "recurrentWeight"),
    ("gruCell", "hidden_state", [BATCH, HIDDEN + 1], "hiddenState"),
    ("gruCell", "hidden_state", [BATCH + 1, HIDDEN], "hiddenState"),
    ("gruCell", "bias", [4 * HIDDEN], "bias"),
    ("gruCell", "recurrent_bias", [3 * HIDDEN + 1], "recurrentBias"),
    ("lstm", "weight", [1, 3 * HIDDEN, INPUT], "weight"),
    ("lstm", "recurrent_weight", [1, 4 * HIDDEN, INPUT], "recurrentWeight"),
    ("lstm", "bias", [1, 3 * HIDDEN], "bias"),
    ("lstm", "recurrent_bias", [2, 4 * HIDDEN], "recurrentBias"),
    ("lstm", "peephole_weight", [1, 4 * HIDDEN], "peepholeWeight"),
    ("lstm", "initial_hidden_state", [1, BATCH, HIDDEN + 1], "initialHiddenState"),
    ("lstm", "initial_cell_state", [1, BATCH + 1, HIDDEN], "initialCellState"),
    ("lstmCell", "weight", [4 * HIDDEN, INPUT - 1], "weight"),
    ("lstmCell", "recurrent_weight", [3 * HIDDEN, HIDDEN], "recurrentWeight"),
    ("lstmCell", "hidden_state", [BATCH, HIDDEN - 1], "hiddenState"),
    ("lstmCell", "cell_state", [BATCH - 1, HIDDEN], "cellState"),
    ("lstmCell", "bias", [3 * HIDDEN], "bias"),
    ("lstmCell", "recurrent_bias", [8 * HIDDEN], "recurrentBias"),
    ("lstmCell", "peephole_weight", [4 * HIDDEN], "peepholeWeight"),
])
def test_wrong_shape(b: MLGraphBuilder, op: str, key: str, shape: list[int], role: str) -> None:
    with pytest.raises(MLTypeError, match=re.escape(f"{op}: {role} shape {shape} must be")):
        CALLS[op](b, **{key: _in(b, shape)})


@pytest.mark.parametrize("op", ["gru", "lstm"])
def test_direction_both_needs_two_directions(b: MLGraphBuilder, op: str) -> None:
    with pytest.raises(MLTypeError, match=f"{op}: weight shape .* must be \\[2,"):
        CALLS[op](b, direction="both")
    assert len(CALLS[op](b, d=2, direction="both")) == (1 if op == "gru" else 2)
    with pytest.raises(MLTypeError, match=f"{op}: weight shape \\[2,"):
        CALLS[op](b, d=2, direction="backward")


# -- steps and hiddenSize ------------------------------------------------------------------
@pytest.mark.parametrize("op", ["gru", "lstm"])
def test_steps_rules(b: MLGraphBuilder, op: str) -> None:
    with pytest.raises(MLTypeError, match=f"{op}: steps must be greater than 0"):
        CALLS[op](b, steps=0)
    with pytest.raises(MLTypeError, match=rf"{op}: input.shape\[0\] \(2\) must equal steps "
                                          r"\(3\)"):
        CALLS[op](b, steps=3)
    with pytest.raises(MLTypeError, match=f"{op}: steps .* outside the unsigned long range"):
        CALLS[op](b, steps=-1)
    with pytest.raises(MLTypeError, match=f"{op}: steps must be an unsigned integer"):
        CALLS[op](b, steps=2.0)


@pytest.mark.parametrize(("op", "factor"), [("gru", 6), ("gruCell", 6), ("lstm", 8),
                                            ("lstmCell", 8)])
def test_hidden_size_rules(b: MLGraphBuilder, op: str, factor: int) -> None:
    with pytest.raises(MLTypeError, match=f"{op}: hiddenSize must be greater than 0"):
        CALLS[op](b, hidden_size=0)
    too_big = (2**31 - 1) // factor + 1
    with pytest.raises(MLTypeError, match=rf"{op}: hiddenSize \* {factor} \({too_big * factor}"
                                          r"\) is not a valid dimension"):
        CALLS[op](b, hidden_size=too_big)
    with pytest.raises(MLTypeError, match=f"{op}: hiddenSize .* outside the unsigned long"):
        CALLS[op](b, hidden_size=2**32)
    with pytest.raises(MLTypeError, match=f"{op}: hiddenSize must be an unsigned integer"):
        CALLS[op](b, hidden_size="5")


# -- enum, boolean and activation options --------------------------------------------------
@pytest.mark.parametrize(("op", "count"), [("gru", 2), ("gruCell", 2), ("lstm", 3),
                                           ("lstmCell", 3)])
def test_activations_rules(b: MLGraphBuilder, op: str, count: int) -> None:
    for bad in (["sigmoid"] * (count - 1), ["sigmoid"] * (count + 1), []):
        with pytest.raises(MLTypeError, match=f"{op}: activations must have {count} items"):
            CALLS[op](b, activations=bad)
    with pytest.raises(MLTypeError, match=f"{op}: activation 'gelu' is not one of"):
        CALLS[op](b, activations=["sigmoid"] * (count - 1) + ["gelu"])
    with pytest.raises(MLTypeError, match=f"{op}: activations must be a sequence"):
        CALLS[op](b, activations="sigmoid")
    with pytest.raises(MLTypeError, match=f"{op}: activation 'Sigmoid' is not one of"):
        CALLS[op](b, activations=["Sigmoid"] * count)


@pytest.mark.parametrize(("op", "option", "value", "match"), [
    ("gru", "direction", "reverse", "direction 'reverse' is not one of"),
    ("gru", "layout", "iofg", "layout 'iofg' is not one of"),
    ("gru", "reset_after", 1, "resetAfter must be a boolean"),
    ("gru", "return_sequence", "yes", "returnSequence must be a boolean"),
    ("gruCell", "layout", "nzr", "layout 'nzr' is not one of"),
    ("gruCell", "reset_after", None, "resetAfter must be a boolean"),
    ("lstm", "direction", "bidirectional", "direction 'bidirectional' is not one of"),
    ("lstm", "layout", "zrn", "layout 'zrn' is not one of"),
    ("lstm", "return_sequence", 0, "returnSequence must be a boolean"),
    ("lstmCell", "layout", "ifog", "layout 'ifog' is not one of"),
])
def test_enum_and_boolean_options(b: MLGraphBuilder, op: str, option: str, value: Any,
                                  match: str) -> None:
    with pytest.raises(MLTypeError, match=f"{op}: {match}"):
        CALLS[op](b, **{option: value})


# -- operand validity and builder state ----------------------------------------------------
@pytest.mark.parametrize("op", list(CALLS))
def test_operands_from_another_builder(b: MLGraphBuilder, op: str) -> None:
    other = MLGraphBuilder(ML().create_context())
    key = "bias"
    shape = {"gru": [1, 15], "gruCell": [15], "lstm": [1, 20], "lstmCell": [20]}[op]
    with pytest.raises(MLTypeError, match=f"{op}: bias was created by another MLGraphBuilder"):
        CALLS[op](b, **{key: other.input("x", shape, "float32")})
    with pytest.raises(MLTypeError, match=f"{op}: weight must be an MLOperand"):
        CALLS[op](b, weight=[[1.0]])


def test_after_build_is_invalid_state(b: MLGraphBuilder) -> None:
    x3, x2 = _in(b, [1, 1, 1]), _in(b, [1, 1])
    w3, w2 = _in(b, [1, 3, 1]), _in(b, [3, 1])
    l3, l2 = _in(b, [1, 4, 1]), _in(b, [4, 1])
    out = b.gru(x3, w3, w3, 1, 1)[0]
    b.build({"y": out})
    for call in (lambda: b.gru(x3, w3, w3, 1, 1), lambda: b.gru_cell(x2, w2, w2, x2, 1),
                 lambda: b.lstm(x3, l3, l3, 1, 1), lambda: b.lstm_cell(x2, l2, l2, x2, x2, 1)):
        with pytest.raises(MLInvalidStateError):
            call()
