"""Rule recurrent-speed (converter.passes.targets.rules_recurrent_speed): for chromium-tflite,
every float32 lstm / gru / lstmCell / gruCell is composed from primitives (the measurements
found the composition faster at every size), float16 ones are left native; the composed graph
fits the target's limits and computes what the native operator computes: onnxruntime's
LSTM / GRU kernels (the ONNX export of the original graph), the reference runtime's float64
kernels, and the ONNX backend node tests' expected outputs, within float32 tolerance."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from converter import convert
from converter.core.webnn import ML, MLGraph, MLGraphBuilder, MLOperand
from converter.passes.targets import load_target
from converter.passes.targets.check import check_graph
from converter.passes.targets.passes import lower
from converter.passes.targets.rules_compose import RECURRENT

TARGET = load_target("chromium-tflite")
NOTE = "composed from gemm and elementwise operators"


@dataclass(frozen=True)
class Net:
    """A recurrent graph: `op`, sizes, and the builder call's options."""

    op: str
    steps: int = 3
    batch: int = 2
    size: int = 4
    hidden: int = 5
    dirs: int = 1
    options: dict[str, Any] = field(default_factory=dict)
    extra: tuple[str, ...] = ()
    """Operands to add: "bias", "recurrentBias", "peephole", "state" (initial states)."""
    dtype: str = "float32"


def _build(net: Net) -> tuple[MLGraph, dict[str, np.ndarray]]:
    rng = np.random.default_rng(11)
    b = MLGraphBuilder(ML().create_context())
    g = 4 if net.op.startswith("lstm") else 3
    h, d, t = net.hidden, net.dirs, net.dtype

    def w(*shape: int) -> MLOperand:
        return b.constant((rng.normal(size=shape) * 0.5).astype(t))

    def data(*shape: int) -> np.ndarray:
        return rng.normal(size=shape).astype(t)

    cell = net.op.endswith("Cell")
    lead = () if cell else (d,)
    opt = dict(net.options)
    if "bias" in net.extra:
        opt["bias"] = w(*lead, g * h)
    if "recurrentBias" in net.extra:
        opt["recurrent_bias"] = w(*lead, g * h)
    if "peephole" in net.extra:
        opt["peephole_weight"] = w(*lead, 3 * h)
    feeds: dict[str, np.ndarray] = {}

    def state(name: str, shape: tuple[int, ...]) -> MLOperand:
        feeds[name] = data(*shape)
        return b.input(name, shape=list(shape), data_type=t)

    if cell:
        x = state("x", (net.batch, net.size))
        hs = state("h0", (net.batch, h))
        if net.op == "gruCell":
            out = b.gru_cell(x, w(g * h, net.size), w(g * h, h), hs, h, **opt)
            return b.build({"h": out}), feeds
        cs = state("c0", (net.batch, h))
        outs = b.lstm_cell(x, w(g * h, net.size), w(g * h, h), hs, cs, h, **opt)
        return b.build({"h": outs[0], "c": outs[1]}), feeds
    x = state("x", (net.steps, net.batch, net.size))
    if "state" in net.extra:
        opt["initial_hidden_state"] = state("h0", (d, net.batch, h))
        if net.op == "lstm":
            opt["initial_cell_state"] = state("c0", (d, net.batch, h))
    fn = b.lstm if net.op == "lstm" else b.gru
    outs = fn(x, w(d, g * h, net.size), w(d, g * h, h), net.steps, h, **opt)
    return b.build({f"y{i}": o for i, o in enumerate(outs)}), feeds


ALL = ("bias", "recurrentBias", "peephole", "state")
NETS = {
    "lstm": Net("lstm", extra=("bias",)),
    "lstm all options": Net("lstm", dirs=2, extra=ALL, options={"return_sequence": True,
                                                                 "direction": "both"}),
    "lstm backward ifgo": Net("lstm", extra=("bias", "recurrentBias"), options={
        "direction": "backward", "layout": "ifgo", "return_sequence": True}),
    "lstm activations": Net("lstm", extra=("bias", "peephole"), options={
        "activations": ["relu", "tanh", "sigmoid"], "return_sequence": True}),
    "lstm 32x64": Net("lstm", steps=32, batch=1, size=64, hidden=64, extra=("bias",)),
    "gru reset after": Net("gru", extra=("bias", "recurrentBias", "state"),
                           options={"reset_after": True, "return_sequence": True}),
    "gru reset before": Net("gru", extra=("bias", "recurrentBias"),
                            options={"reset_after": False, "return_sequence": True}),
    "gru both rzn": Net("gru", dirs=2, extra=("bias", "recurrentBias", "state"), options={
        "direction": "both", "layout": "rzn", "return_sequence": True}),
    "gru activations": Net("gru", extra=("recurrentBias",), options={
        "activations": ["relu", "relu"], "reset_after": False}),
    "gru 32x64": Net("gru", steps=32, batch=1, size=64, hidden=64, extra=("bias",)),
    "lstmCell": Net("lstmCell", extra=("bias", "recurrentBias", "peephole")),
    "lstmCell ifgo": Net("lstmCell", extra=("bias",), options={"layout": "ifgo"}),
    "gruCell reset after": Net("gruCell", extra=("bias", "recurrentBias")),
    "gruCell reset before": Net("gruCell", extra=("recurrentBias",),
                                options={"reset_after": False, "layout": "rzn"}),
}


def _ops(graph: MLGraph) -> set[str]:
    return {o.op for o in graph.operations}


def _close(got: dict[str, Any], want: dict[str, Any], what: str) -> None:
    assert got.keys() == want.keys()
    for name, value in want.items():
        ref = np.asarray(value, dtype=np.float64)
        np.testing.assert_allclose(np.asarray(got[name], dtype=np.float64), ref, rtol=1e-5,
                                   atol=1e-5 * max(1.0, float(np.abs(ref).max())),
                                   err_msg=f"{what}: {name}")


@pytest.mark.parametrize("name", NETS)
def test_float32_recurrent_composed_and_exact(name: str) -> None:
    """Composed for the target (every size: the rule has no threshold), inside its limits,
    noted in the report, and equal to the native operator on the reference runtime (float64
    kernels written from the spec) and on onnxruntime (its LSTM / GRU kernels)."""
    pytest.importorskip("onnxruntime")
    from converter.validate import compile_graph

    net = NETS[name]
    graph, feeds = _build(net)
    lowered = lower(graph, TARGET)
    assert net.op in _ops(graph) and not _ops(lowered.graph) & set(RECURRENT)
    assert lowered.applied == {"recurrent-speed": 1}
    assert [v.line() for v in check_graph(lowered.graph, TARGET)] == []
    [note] = lowered.notes
    assert f"{net.op} {NOTE}" in note and note.endswith("; rule recurrent-speed)")
    got = graph.context.compute(lowered.graph, dict(feeds))
    _close(got, graph.context.compute(graph, dict(feeds)), "reference")
    _close(got, compile_graph(graph, "onnxruntime").run(dict(feeds)), "onnxruntime")


@pytest.mark.parametrize("op", ["lstm", "gruCell"])
def test_float16_left_native(op: str) -> None:
    """float16 recurrent operators were not measured: the rule leaves them alone."""
    graph, _ = _build(Net(op, extra=("bias",), dtype="float16"))
    lowered = lower(graph, TARGET)
    assert lowered.graph is graph and "recurrent-speed" not in lowered.applied


def test_other_targets_keep_the_native_operator() -> None:
    """The rule is chromium-tflite's: the other Chromium profiles keep lstm / gru."""
    graph, _ = _build(NETS["lstm"])
    for name in ("chromium-dml", "chromium-coreml"):
        target = load_target(name)
        if "recurrent-speed" in target.rules or "lstm" not in target.limits:
            continue
        assert "lstm" in _ops(lower(graph, target).graph), name


# -- converted ONNX models ------------------------------------------------------------------
def _node_cases() -> list[Any]:
    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [c for c in load_model_tests(kind="node")
                if c.name.startswith(("test_lstm", "test_gru"))]


def _check_converted(model: Any, feeds: dict[str, np.ndarray], want: dict[str, np.ndarray],
                     what: str, **options: Any) -> bool:
    """Converted for the target: no recurrent operator left, the rule noted when the import
    made a native one (else the importer's own unrolling, e.g. ONNX peepholes on the output
    gate), outputs as `want` on the reference runtime and onnxruntime. Whether it was
    native."""
    native = bool(_ops(convert(model, target="spec", **options).graph) & set(RECURRENT))
    result = convert(model, target="chromium-tflite", **options)
    pinned = options.get("pin_inputs") or {}
    assert not _ops(result.graph) & set(RECURRENT), what
    noted = any("rule recurrent-speed" in w for w in result.report.warnings)
    assert noted == native, what
    for backend in ("reference", "onnxruntime"):
        got = result.run({k: v for k, v in feeds.items() if k not in pinned}, backend=backend)
        _close({k: got[k] for k in want}, want, f"{what} on {backend}")
    return native


@pytest.mark.parametrize("case", _node_cases(), ids=lambda c: c.name)
def test_onnx_node_tests_composed(case: Any) -> None:
    """The ONNX backend node tests of LSTM and GRU (defaults, initial bias, peepholes,
    sequence lengths, batchwise, reverse, bidirectional), converted for the target: composed,
    and equal to the suite's expected outputs and to onnxruntime on the original model."""
    pytest.importorskip("onnxruntime")
    from tests.op_mappings.onnx.harness import run_ort

    names = [i.name for i in case.model.graph.input]
    outs = [o.name for o in case.model.graph.output]
    inputs, expected = case.data_sets[0]
    feeds = {n: np.asarray(v) for n, v in zip(names, inputs, strict=True)}
    want = dict(zip(outs, expected, strict=True))
    batchwise = any(a.name == "layout" and a.i == 1 for a in case.model.graph.node[0].attribute)
    if not batchwise:  # onnxruntime has no batch-first (layout 1) GRU / LSTM
        _close(run_ort(case.model, feeds), want, "onnxruntime vs the suite")
    pins = {n: v for n, v in feeds.items() if v.dtype.kind in "iu"}  # sequence_lens
    _check_converted(case.model, feeds, want, case.name, pin_inputs=pins)


ONNX_CASES: dict[str, Callable[[], tuple[str, dict[str, Any], list[Any]]]] = {}


def _onnx_case(name: str) -> Callable[[Callable[[], tuple[str, dict[str, Any], list[Any]]]],
                                      Callable[[], tuple[str, dict[str, Any], list[Any]]]]:
    def register(fn: Callable[[], tuple[str, dict[str, Any], list[Any]]]
                 ) -> Callable[[], tuple[str, dict[str, Any], list[Any]]]:
        ONNX_CASES[name] = fn
        return fn
    return register


def _rand(*shape: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-0.6, 0.6, shape).astype(np.float32)


@_onnx_case("GRU linear_before_reset=1 bidirectional")
def _gru_lbr() -> tuple[str, dict[str, Any], list[Any]]:
    h = 6
    return "GRU", {"hidden_size": h, "linear_before_reset": 1, "direction": "bidirectional"}, [
        ("x", _rand(5, 2, 4, seed=1)), ("W", _rand(2, 3 * h, 4, seed=2)),
        ("R", _rand(2, 3 * h, h, seed=3)), ("B", _rand(2, 6 * h, seed=4)), ("lens", None),
        ("h0", _rand(2, 2, h, seed=5))]


@_onnx_case("GRU Relu/Tanh reverse")
def _gru_acts() -> tuple[str, dict[str, Any], list[Any]]:
    h = 5
    return "GRU", {"hidden_size": h, "activations": ["Relu", "Tanh"], "direction": "reverse"}, [
        ("x", _rand(4, 3, 4, seed=1)), ("W", _rand(1, 3 * h, 4, seed=2)),
        ("R", _rand(1, 3 * h, h, seed=3)), ("B", _rand(1, 6 * h, seed=4))]


@_onnx_case("LSTM peepholes (output gate 0) Sigmoid/Relu/Tanh bidirectional")
def _lstm_peep() -> tuple[str, dict[str, Any], list[Any]]:
    h = 4
    peep = _rand(2, 3 * h, seed=7)
    peep[:, h:2 * h] = 0  # ONNX's output-gate peephole reads the new cell state: not native
    return "LSTM", {"hidden_size": h, "direction": "bidirectional",
                    "activations": ["Sigmoid", "Relu", "Tanh"] * 2}, [
        ("x", _rand(4, 2, 3, seed=1)), ("W", _rand(2, 4 * h, 3, seed=2)),
        ("R", _rand(2, 4 * h, h, seed=3)), ("B", _rand(2, 8 * h, seed=4)), ("lens", None),
        ("h0", _rand(2, 2, h, seed=5)), ("c0", _rand(2, 2, h, seed=6)), ("P", peep)]


@pytest.mark.parametrize("name", ONNX_CASES)
def test_onnx_recurrent_nodes_composed(name: str) -> None:
    """ONNX GRU with linear_before_reset=1, non-default activations, reverse and
    bidirectional LSTM with peepholes: imported as native WebNN operators, composed for the
    target, equal to onnxruntime on the original node."""
    pytest.importorskip("onnxruntime")
    from tests.op_mappings.onnx.harness import node_model, run_ort

    op, attrs, items = ONNX_CASES[name]()
    outputs = ("y", "yh", "yc") if op == "LSTM" else ("y", "yh")
    constants = ("W", "R", "B", "P", "lens")
    model = node_model(op, items, attrs, opset=14, outputs=outputs, constants=constants)
    feeds = {n: v for n, v in items if v is not None and n not in constants}
    assert _check_converted(model, feeds, run_ort(model, feeds), name), "imported natively"


@pytest.mark.parametrize("kind", ["rnn_gru_stack", "lstm_stack", "gru_bidi"])
def test_zoo_recurrent_models_composed(kind: str, tmp_path: Any) -> None:
    """The zoo's recurrent generators (converter/zoo/models/make_recurrent.py: an RNN feeding
    a GRU with linear_before_reset=1, two stacked LSTMs, a bidirectional GRU), converted for
    the target: composed, equal to onnxruntime on the original model."""
    pytest.importorskip("onnxruntime")
    import onnx

    from converter.zoo.models.make_recurrent import make
    from tests.op_mappings.onnx.harness import run_ort

    path = tmp_path / f"{kind}.onnx"
    sizes = {"hidden": 32, "size": 16} if kind != "rnn_gru_stack" else {}
    make(path, kind=kind, seed=0, **sizes)
    model = onnx.load(path)
    rng = np.random.default_rng(2)
    fixed = {"seq": 6, "batch": 2}
    graph = convert(str(path), free_dims=fixed, target="spec").graph
    feeds = {n: rng.normal(size=graph.inputs[n].shape).astype(np.float32)
             for n in graph.inputs}
    assert _check_converted(str(path), feeds, run_ort(model, feeds), kind, free_dims=fixed)
