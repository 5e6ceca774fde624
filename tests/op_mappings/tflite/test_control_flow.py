"""WHILE (unrolled), IF (inlined or selected), CALL_ONCE and STABLEHLO_COMPOSITE vs LiteRT,
with small multi-subgraph models built with the object API."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from flatbuffers import flexbuffers

from converter.core.errors import BudgetExceeded, ConversionFailed
from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import ModelBuilder, S, check, rand


def _while(mb: ModelBuilder, inputs: list[int], outputs: list[int], cond: int, body: int
           ) -> None:
    o = S.WhileOptionsT()
    o.condSubgraphIndex, o.bodySubgraphIndex = cond, body
    mb.op("WHILE", inputs, outputs, o)


def _counter_cond(mb: ModelBuilder, extra: list[tuple[str, list[int], str]],
                  limit: int | None) -> int:
    """cond(i, *extra): i < limit (limit constant), or i < n with n the last loop value."""
    index = mb.subgraph("cond")
    i = mb.input("i", [], "int32")
    others = [mb.input(name, shape, dtype) for name, shape, dtype in extra]
    n = mb.const("limit", np.array(limit, np.int32)) if limit is not None else others[-1]
    flag = mb.output(mb.tensor("flag", [], "bool"))
    mb.op("LESS", [i, n], [flag])
    return index


def counter_model(limit: int) -> bytes:
    """y = tanh(y * w + c) repeated `limit` times (a counter loop, as Keras exports)."""
    mb = ModelBuilder()
    x = mb.input("x", [2, 3])
    i0 = mb.const("i0", np.array(0, np.int32))
    i_out = mb.tensor("i_out", [], "int32")
    y = mb.output(mb.tensor("y", [2, 3]))
    cond = _counter_cond(mb, [("x", [2, 3], "float32")], limit)
    body = mb.subgraph("body")
    i = mb.input("i", [], "int32")
    xb = mb.input("x", [2, 3])
    one = mb.const("one", np.array(1, np.int32))
    w = mb.const("w", rand(2, 3, seed=1, low=0.5, high=1.5))
    c = mb.const("c", rand(3, seed=2))
    i2 = mb.output(mb.tensor("i2", [], "int32"))
    t = mb.tensor("t", [2, 3])
    u = mb.tensor("u", [2, 3])
    x2 = mb.output(mb.tensor("x2", [2, 3]))
    mb.op("ADD", [i, one], [i2], S.AddOptionsT())
    mb.op("MUL", [xb, w], [t], S.MulOptionsT())
    mb.op("ADD", [t, c], [u], S.AddOptionsT())
    mb.op("TANH", [u], [x2])
    mb.use(0)
    _while(mb, [i0, x], [i_out, y], cond, body)
    return mb.build()


@pytest.mark.parametrize("limit", [0, 1, 5])
def test_while_counter_unrolled(limit: int) -> None:
    result = check(counter_model(limit), [rand(2, 3)])
    ops = result.report.to_dict()["ops"]["WHILE"]
    if limit:
        assert "tanh" in ops["webnn_ops"]


def test_while_iteration_bound() -> None:
    model = counter_model(5)
    with pytest.raises(BudgetExceeded, match="at least 4 iterations, over the budget of 3"):
        convert_tflite(model, settings={"max_while_iterations": 3})
    convert_tflite(model, settings={"max_while_iterations": 5})


def test_while_default_bound_is_4096() -> None:
    with pytest.raises(BudgetExceeded, match="at least 4,097 iterations, over the budget of "
                                             "4,096 iterations"):
        convert_tflite(counter_model(5000))


def test_while_dynamic_trip_count_is_an_error() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 3])
    n = mb.input("n", [], "int32")
    i0 = mb.const("i0", np.array(0, np.int32))
    outs = [mb.tensor("i_out", [], "int32"), mb.output(mb.tensor("y", [2, 3])),
            mb.tensor("n_out", [], "int32")]
    cond = _counter_cond(mb, [("x", [2, 3], "float32"), ("n", [], "int32")], None)
    body = mb.subgraph("body")
    i = mb.input("i", [], "int32")
    xb = mb.input("x", [2, 3])
    nb = mb.input("n", [], "int32")
    one = mb.const("one", np.array(1, np.int32))
    i2 = mb.output(mb.tensor("i2", [], "int32"))
    x2 = mb.output(mb.tensor("x2", [2, 3]))
    mb.output(nb)
    mb.op("ADD", [i, one], [i2], S.AddOptionsT())
    mb.op("TANH", [xb], [x2])
    mb.use(0)
    _while(mb, [i0, x, n], outs, cond, body)
    with pytest.raises(ConversionFailed, match="WHILE condition .* depends on graph inputs"):
        convert_tflite(mb.build())


def rnn_loop_model(steps: int = 4, batch: int = 2, n_in: int = 3, units: int = 5) -> bytes:
    """A Keras-style RNN: loop over time with GATHER of step t, FULLY_CONNECTED, TANH and
    DYNAMIC_UPDATE_SLICE into an output buffer; loop vars (t, h, seq, buf)."""
    mb = ModelBuilder()
    seq = mb.input("seq", [steps, batch, n_in])
    t0 = mb.const("t0", np.array(0, np.int32))
    h0 = mb.const("h0", np.zeros((batch, units), np.float32))
    buf0 = mb.const("buf0", np.zeros((steps, batch, units), np.float32))
    outs = [mb.tensor("t_out", [], "int32"), mb.output(mb.tensor("h", [batch, units])),
            mb.tensor("seq_out", [steps, batch, n_in]),
            mb.output(mb.tensor("all_h", [steps, batch, units]))]
    cond = _counter_cond(mb, [("h", [batch, units], "float32"),
                              ("seq", [steps, batch, n_in], "float32"),
                              ("buf", [steps, batch, units], "float32")], steps)
    body = mb.subgraph("body")
    t = mb.input("t", [], "int32")
    h = mb.input("h", [batch, units])
    sq = mb.input("seq", [steps, batch, n_in])
    buf = mb.input("buf", [steps, batch, units])
    one = mb.const("one", np.array(1, np.int32))
    w = mb.const("w", rand(units, n_in, seed=3))
    u = mb.const("u", rand(units, units, seed=4, low=-0.5, high=0.5))
    bias = mb.const("bias", rand(units, seed=5))
    zeros2 = mb.const("zeros2", np.zeros(2, np.int32))
    shape3 = mb.const("shape3", np.array([1, batch, units], np.int32))
    shape1 = mb.const("shape1", np.array([1], np.int32))
    x_t = mb.tensor("x_t", [batch, n_in])
    xw = mb.tensor("xw", [batch, units])
    hu = mb.tensor("hu", [batch, units])
    pre = mb.tensor("pre", [batch, units])
    h2 = mb.output(mb.tensor("h2", [batch, units]))
    t2 = mb.tensor("t2", [], "int32")
    h3 = mb.tensor("h3", [1, batch, units])
    t1 = mb.tensor("t1", [1], "int32")
    start = mb.tensor("start", [3], "int32")
    buf2 = mb.tensor("buf2", [steps, batch, units])
    mb.sg.outputs[:] = []
    g = S.GatherOptionsT()
    g.axis = 0
    mb.op("GATHER", [sq, t], [x_t], g)
    mb.op("FULLY_CONNECTED", [x_t, w, bias], [xw], S.FullyConnectedOptionsT())
    mb.op("FULLY_CONNECTED", [h, u, -1], [hu], S.FullyConnectedOptionsT())
    mb.op("ADD", [xw, hu], [pre], S.AddOptionsT())
    mb.op("TANH", [pre], [h2])
    mb.op("RESHAPE", [h2, shape3], [h3], S.ReshapeOptionsT())
    mb.op("RESHAPE", [t, shape1], [t1], S.ReshapeOptionsT())
    cat = S.ConcatenationOptionsT()
    cat.axis = 0
    mb.op("CONCATENATION", [t1, zeros2], [start], cat)
    mb.op("DYNAMIC_UPDATE_SLICE", [buf, h3, start], [buf2])
    mb.op("ADD", [t, one], [t2], S.AddOptionsT())
    mb.sg.outputs[:] = [t2, h2, sq, buf2]
    mb.use(0)
    _while(mb, [t0, h0, seq, buf0], outs, cond, body)
    return mb.build()


def test_while_keras_style_rnn() -> None:
    result = check(rnn_loop_model(), [rand(4, 2, 3, seed=7)])
    assert result.report.counts()["unsupported"] == 0


def _branch(mb: ModelBuilder, op: str) -> int:
    index = mb.subgraph(op.lower())
    a = mb.input("a", [2, 3])
    b = mb.input("b", [2, 3])
    y = mb.output(mb.tensor("y", [2, 3]))
    opts = {"ADD": S.AddOptionsT(), "MUL": S.MulOptionsT()}[op]
    mb.op(op, [a, b], [y], opts)
    return index


def if_model(cond_value: bool | None) -> bytes:
    mb = ModelBuilder()
    if cond_value is None:
        c = mb.input("cond", [], "bool")
    else:
        c = mb.const("cond", np.array(cond_value))
    a = mb.input("a", [2, 3])
    b = mb.input("b", [2, 3])
    y = mb.output(mb.tensor("y", [2, 3]))
    then_i, else_i = _branch(mb, "ADD"), _branch(mb, "MUL")
    mb.use(0)
    o = S.IfOptionsT()
    o.thenSubgraphIndex, o.elseSubgraphIndex = then_i, else_i
    mb.op("IF", [c, a, b], [y], o)
    return mb.build()


@pytest.mark.parametrize("value", [True, False])
def test_if_constant_condition_inlined(value: bool) -> None:
    result = check(if_model(value), [rand(2, 3, seed=1), rand(2, 3, seed=2)])
    ops = result.report.to_dict()["ops"]["IF"]["webnn_ops"]
    assert ops == ["add" if value else "mul"]


@pytest.mark.parametrize("value", [True, False])
def test_if_runtime_condition_selected(value: bool) -> None:
    result = check(if_model(None), [np.array(value), rand(2, 3, seed=1), rand(2, 3, seed=2)])
    assert "where" in result.report.to_dict()["ops"]["IF"]["webnn_ops"]


def test_if_runtime_condition_shape_mismatch_is_an_error() -> None:
    mb = ModelBuilder()
    c = mb.input("cond", [], "bool")
    a = mb.input("a", [2, 3])
    y = mb.output(mb.tensor("y", [2, 3]))
    then_i = mb.subgraph("then")
    ta = mb.input("a", [2, 3])
    mb.output(ta)
    else_i = mb.subgraph("else")
    ea = mb.input("a", [2, 3])
    ey = mb.output(mb.tensor("y", [3]))
    axes = mb.const("axes", np.array([0], np.int32))
    mb.op("SUM", [ea, axes], [ey], S.ReducerOptionsT())
    mb.use(0)
    o = S.IfOptionsT()
    o.thenSubgraphIndex, o.elseSubgraphIndex = then_i, else_i
    mb.op("IF", [c, a], [y], o)
    with pytest.raises(ConversionFailed, match="identical shapes"):
        convert_tflite(mb.build())


def test_stablehlo_composite_inlined() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 4])
    w = mb.const("w", rand(2, 4, seed=3))
    y = mb.output(mb.tensor("y", [2, 4]))
    dec = mb.subgraph("odml.test_decomposition")
    a = mb.input("a", [2, 4])
    b = mb.input("b", [2, 4])
    s = mb.tensor("s", [2, 4])
    r = mb.output(mb.tensor("r", [2, 4]))
    mb.op("ADD", [a, b], [s], S.AddOptionsT())
    mb.op("LOGISTIC", [s], [r])
    mb.use(0)
    o = S.StableHLOCompositeOptionsT()
    o.name, o.decompositionSubgraphIndex, o.version = "odml.test", dec, 1
    o.compositeAttributes = list(flexbuffers.Dumps({"alpha": 1}))
    mb.op("STABLEHLO_COMPOSITE", [x, w], [y], o)
    result = check(mb.build(), [rand(2, 4)])
    assert result.report.to_dict()["ops"]["STABLEHLO_COMPOSITE"]["webnn_ops"] == [
        "add", "sigmoid"]


def test_bad_subgraph_index() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2])
    y = mb.output(mb.tensor("y", [2]))
    o = S.StableHLOCompositeOptionsT()
    o.name, o.decompositionSubgraphIndex = "odml.bad", 7
    o.compositeAttributes = list(flexbuffers.Dumps({}))
    mb.op("STABLEHLO_COMPOSITE", [x], [y], o)
    with pytest.raises(ConversionFailed, match="subgraph 7, the model has 1"):
        convert_tflite(mb.build())


def test_call_once_runs_init_once() -> None:
    """CALL_ONCE twice on the same init subgraph: the variable keeps the main graph's
    assignment (LiteRT runs the init subgraph only once too)."""
    mb = ModelBuilder()
    x = mb.input("x", [3])
    h = mb.tensor("h", [], "resource")
    t = mb.tensor("t", [3])
    v = mb.tensor("v", [3])
    y = mb.output(mb.tensor("y", [3]))
    init = mb.subgraph("init")
    hi = mb.tensor("h", [], "resource")
    c = mb.const("c", np.array([1.0, 2.0, 3.0], np.float32))
    vh = S.VarHandleOptionsT()
    vh.sharedName = "state"
    mb.op("VAR_HANDLE", [], [hi], vh)
    mb.op("ASSIGN_VARIABLE", [hi, c], [])
    mb.use(0)
    once = S.CallOnceOptionsT()
    once.initSubgraphIndex = init
    mb.op("CALL_ONCE", [], [], once)
    mb.op("VAR_HANDLE", [], [h], vh)
    mb.op("ADD", [x, x], [t], S.AddOptionsT())
    mb.op("ASSIGN_VARIABLE", [h, t], [])
    mb.op("CALL_ONCE", [], [], once)
    mb.op("READ_VARIABLE", [h], [v])
    mb.op("ADD", [v, x], [y], S.AddOptionsT())
    result = check(mb.build(), [rand(3)])
    assert any("stateless" in w for w in result.report.warnings)


KERAS = sorted((Path(__file__).resolve().parent / "data").glob("keras_*.tflite"))


@pytest.mark.parametrize("path", KERAS, ids=lambda p: p.stem)
def test_keras_rnn_exports(path: Path) -> None:
    """Real Keras SimpleRNN / GRU / LSTM / Bidirectional(LSTM) layers exported by the TFLite
    converter (data/make_fixtures.py): WHILE loops with tensor lists lowered to GATHER,
    SLICE (empty at step 0) and CONCATENATION."""
    data = path.read_bytes()
    result = check(data, [rand(1, 5, 3, seed=11)], atol=1e-5)
    assert "WHILE" in result.report.to_dict()["ops"]


@pytest.mark.parametrize("seed", [1, 2])
def test_tf_cond_export(seed: int) -> None:
    """`tf.cond(reduce_sum(x) > 0, ...)` exported by the TFLite converter: an IF whose
    condition is computed from the input (seeds 1 and 2 take different branches)."""
    data = (Path(__file__).resolve().parent / "data" / "tf_cond.tflite").read_bytes()
    x = rand(2, 3, seed=seed)
    assert (x.sum() > 0) == (seed == 1)
    result = check(data, [x])
    assert "where" in result.report.to_dict()["ops"]["IF"]["webnn_ops"]
