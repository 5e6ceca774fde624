"""Operators a target lacks, composed from others (converter.passes.targets.rules_compose) and
float16 computed in float32 (rules_casts): each small graph, lowered for a hand-written limits
file that lacks its operator (or float16), uses only what the limits declare (check_graph)
and matches a float64 numpy oracle written from the spec's definition of the operator."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraphBuilder, MLOperand
from converter.passes.targets import Target, load_target
from converter.passes.targets.check import check_graph
from converter.passes.targets.passes import LIMITS_RULES, lower

RNG = np.random.default_rng(7)
X = RNG.normal(size=(2, 3, 4)).astype(np.float32) * 3
X[0, 0, :2] = [0.0, -0.0]
POS = np.abs(X) + 0.5
U8A = np.array([0, 1, 2, 0, 255, 7], dtype=np.uint8)
U8B = np.array([0, 0, 3, 9, 1, 0], dtype=np.uint8)


def _erf(v: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf)(v)


def _sigm(v: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-v))


@dataclass(frozen=True)
class Case:
    """One operator lacking from the limits: `make(b, x)` builds it on input x (`feed`),
    `oracle(feed)` is the spec's float64 result."""

    name: str
    op: str
    make: Callable[[MLGraphBuilder, MLOperand], MLOperand]
    oracle: Callable[[np.ndarray], np.ndarray]
    feed: np.ndarray = field(default_factory=lambda: X)
    rule: str = ""
    tol: float = 1e-5


def _norm(v: np.ndarray, axes: tuple[int, ...], eps: float) -> np.ndarray:
    v = v.astype(np.float64)
    mean = v.mean(axis=axes, keepdims=True)
    var = ((v - mean) ** 2).mean(axis=axes, keepdims=True)
    return (v - mean) / np.sqrt(var + eps)


SCALE = np.array([0.5, 2.0, -1.0], dtype=np.float32)
BIAS = np.array([0.1, 0.0, 3.0], dtype=np.float32)
X4 = RNG.normal(size=(2, 3, 4, 5)).astype(np.float32)

CASES = [
    Case("gelu", "gelu", lambda b, x: b.gelu(x), lambda v: 0.5 * v * (1 + _erf(v / math.sqrt(2)))),
    Case("hardSigmoid", "hardSigmoid", lambda b, x: b.hard_sigmoid(x, alpha=0.3, beta=0.4),
         lambda v: np.clip(0.3 * v + 0.4, 0, 1)),
    Case("hardSwish", "hardSwish", lambda b, x: b.hard_swish(x),
         lambda v: v * np.clip(v + 3, 0, 6) / 6),
    Case("softplus", "softplus", lambda b, x: b.softplus(x), lambda v: np.log1p(np.exp(v))),
    Case("softsign", "softsign", lambda b, x: b.softsign(x), lambda v: v / (1 + np.abs(v))),
    Case("elu", "elu", lambda b, x: b.elu(x, alpha=0.7),
         lambda v: np.where(v > 0, v, 0.7 * (np.exp(v) - 1))),
    Case("leakyRelu", "leakyRelu", lambda b, x: b.leaky_relu(x, alpha=0.2),
         lambda v: np.where(v >= 0, v, 0.2 * v)),
    Case("prelu", "prelu",
         lambda b, x: b.prelu(x, b.constant(np.array([0.1, 0.2, 0.3, 0.4], np.float32))),
         lambda v: np.where(v >= 0, v, v * np.array([0.1, 0.2, 0.3, 0.4]))),
    Case("linear", "linear", lambda b, x: b.linear(x, alpha=2.0, beta=-1.0),
         lambda v: 2 * v - 1),
    Case("relu", "relu", lambda b, x: b.relu(x), lambda v: np.maximum(v, 0)),
    Case("sigmoid", "sigmoid", lambda b, x: b.sigmoid(x), _sigm),
    Case("neg", "neg", lambda b, x: b.neg(x), lambda v: -v),
    Case("reciprocal", "reciprocal", lambda b, x: b.reciprocal(x), lambda v: 1 / v, POS),
    Case("sign", "sign", lambda b, x: b.sign(x), np.sign),
    Case("isNaN", "isNaN", lambda b, x: b.is_nan(b.log(x)),
         lambda v: np.isnan(np.log(v)).astype(np.uint8)),
    Case("isInfinite", "isInfinite", lambda b, x: b.is_infinite(b.reciprocal(x)),
         lambda v: np.isinf(1 / v.astype(np.float32)).astype(np.uint8)),
    Case("logicalNot", "logicalNot", lambda b, x: b.logical_not(x),
         lambda v: (v == 0).astype(np.uint8), U8A),
    Case("logicalAnd", "logicalAnd",
         lambda b, x: b.logical_and(x, b.constant(U8B)),
         lambda v: ((v != 0) & (U8B != 0)).astype(np.uint8), U8A),
    Case("logicalOr", "logicalOr",
         lambda b, x: b.logical_or(x, b.constant(U8B)),
         lambda v: ((v != 0) | (U8B != 0)).astype(np.uint8), U8A),
    Case("logicalXor", "logicalXor",
         lambda b, x: b.logical_xor(x, b.constant(U8B)),
         lambda v: ((v != 0) ^ (U8B != 0)).astype(np.uint8), U8A),
    Case("reduceL1", "reduceL1", lambda b, x: b.reduce_l1(x, axes=[1]),
         lambda v: np.abs(v).sum(axis=1)),
    Case("reduceL2", "reduceL2", lambda b, x: b.reduce_l2(x, axes=[0, 2], keep_dimensions=True),
         lambda v: np.sqrt((v * v).sum(axis=(0, 2), keepdims=True))),
    Case("reduceLogSum", "reduceLogSum", lambda b, x: b.reduce_log_sum(x, axes=[2]),
         lambda v: np.log(v.sum(axis=2)), POS),
    Case("reduceLogSumExp", "reduceLogSumExp", lambda b, x: b.reduce_log_sum_exp(x, axes=[2]),
         lambda v: np.log(np.exp(v).sum(axis=2)), X * 10),
    Case("reduceSumSquare", "reduceSumSquare", lambda b, x: b.reduce_sum_square(x),
         lambda v: (v * v).sum()),
    Case("reduceMean", "reduceMean", lambda b, x: b.reduce_mean(x, axes=[1, 2]),
         lambda v: v.mean(axis=(1, 2))),
    Case("layerNormalization", "layerNormalization",
         lambda b, x: b.layer_normalization(x, axes=[2], epsilon=1e-3),
         lambda v: _norm(v, (2,), 1e-3)),
    Case("instanceNormalization", "instanceNormalization",
         lambda b, x: b.instance_normalization(x, scale=b.constant(SCALE),
                                               bias=b.constant(BIAS), epsilon=1e-4),
         lambda v: _norm(v, (2, 3), 1e-4) * SCALE.reshape(1, 3, 1, 1) +
         BIAS.reshape(1, 3, 1, 1), X4),
    Case("batchNormalization", "batchNormalization",
         lambda b, x: b.batch_normalization(x, b.constant(BIAS), b.constant(POS[0, :, 0]),
                                            scale=b.constant(SCALE), axis=1, epsilon=1e-2),
         lambda v: (v - BIAS.reshape(1, 3, 1, 1)) /
         np.sqrt(POS[0, :, 0].reshape(1, 3, 1, 1).astype(np.float64) + 1e-2) *
         SCALE.reshape(1, 3, 1, 1), X4),
    Case("gemm", "gemm",
         lambda b, x: b.gemm(x, b.constant(X4[0, :, :, 0]), c=b.constant(BIAS[:1]),
                             alpha=0.5, beta=2.0, a_transpose=True),
         lambda v: 0.5 * v.T @ X4[0, :, :, 0] + 2 * BIAS[:1], X[0]),
    Case("softmax", "softmax", lambda b, x: b.softmax(x, 1),
         lambda v: np.exp(v) / np.exp(v).sum(axis=1, keepdims=True)),
    Case("expand", "expand", lambda b, x: b.expand(x, [3, 2, 3, 4]),
         lambda v: np.broadcast_to(v, (3, 2, 3, 4))),
    Case("triangular", "triangular", lambda b, x: b.triangular(x, upper=False, diagonal=1),
         lambda v: np.tril(v, 1)),
]


def _limits_without(*ops: str, drop_float16: bool = False) -> dict[str, Any]:
    limits = ML().create_context().op_support_limits()
    for op in ops:
        limits.pop(op)
    if drop_float16:
        for key, entry in limits.items():
            if isinstance(entry, dict) and key not in ("cast", "input", "output", "constant"):
                for role in entry.values():
                    if isinstance(role, dict) and "float16" in role.get("dataTypes", []):
                        role["dataTypes"] = [t for t in role["dataTypes"] if t != "float16"]
    return limits


def _target(tmp_path: Path, limits: dict[str, Any], name: str = "lacking") -> Target:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(limits))
    target = load_target(path)
    assert set(target.rules) == set(LIMITS_RULES)
    return target


def _run(graph: Any, feed: np.ndarray) -> np.ndarray:
    ctx = graph.context
    return np.asarray(ctx.compute(graph, {"x": feed})["y"])


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning",
                            "ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_composition_fits_and_matches_the_spec(case: Case, tmp_path: Path) -> None:
    target = _target(tmp_path, _limits_without(case.op))
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=list(case.feed.shape),
                data_type="uint8" if case.feed.dtype == np.uint8 else "float32")
    graph = b.build({"y": case.make(b, x)})
    assert check_graph(graph, target), "the case must use the lacking operator"
    lowered = lower(graph, target)
    assert [v.line() for v in check_graph(lowered.graph, target)] == []
    assert case.op not in {o.op for o in lowered.graph.operations}
    assert any("composed from other operators" in n for n in lowered.notes), lowered.notes
    got = _run(lowered.graph, case.feed)
    want = case.oracle(case.feed.astype(np.float64) if case.feed.dtype != np.uint8
                       else case.feed)
    if want.dtype == np.uint8 or got.dtype == np.uint8:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=case.tol,
                                   atol=case.tol * max(1.0, float(np.abs(want).max())))


RECURRENT = ["gru", "gruCell", "lstm", "lstmCell"]


def _recurrent_graph(op: str) -> tuple[Any, dict[str, np.ndarray]]:
    b = MLGraphBuilder(ML().create_context())
    steps, batch, size, hidden = 3, 2, 4, 5
    gates = 3 if op.startswith("gru") else 4
    rng = np.random.default_rng(3)

    def w(*shape: int) -> MLOperand:
        return b.constant(rng.normal(size=shape).astype(np.float32) * 0.5)

    if op in ("gru", "lstm"):
        x = b.input("x", shape=[steps, batch, size], data_type="float32")
        fn = b.gru if op == "gru" else b.lstm
        outs = fn(x, w(1, gates * hidden, size), w(1, gates * hidden, hidden), steps, hidden,
                  bias=w(1, gates * hidden), return_sequence=True)
        graph = b.build({f"y{i}": o for i, o in enumerate(outs)})
        return graph, {"x": rng.normal(size=(steps, batch, size)).astype(np.float32)}
    x = b.input("x", shape=[batch, size], data_type="float32")
    h = b.constant(rng.normal(size=(batch, hidden)).astype(np.float32))
    if op == "gruCell":
        out = b.gru_cell(x, w(gates * hidden, size), w(gates * hidden, hidden), h, hidden,
                         recurrent_bias=w(gates * hidden))
        graph = b.build({"y0": out})
    else:
        c = b.constant(rng.normal(size=(batch, hidden)).astype(np.float32))
        outs = b.lstm_cell(x, w(gates * hidden, size), w(gates * hidden, hidden), h, c, hidden,
                           peephole_weight=w(3 * hidden))
        graph = b.build({f"y{i}": o for i, o in enumerate(outs)})
    return graph, {"x": rng.normal(size=(batch, size)).astype(np.float32)}


@pytest.mark.parametrize("op", RECURRENT)
def test_recurrent_unrolled_matches_onnxruntime(op: str, tmp_path: Path) -> None:
    """The unrolled network against the native operator run by onnxruntime (the ONNX export
    of the original graph: GRU / LSTM nodes)."""
    pytest.importorskip("onnxruntime")
    from converter.validate import compile_graph

    target = _target(tmp_path, _limits_without(op))
    graph, feeds = _recurrent_graph(op)
    lowered = lower(graph, target)
    assert [v.line() for v in check_graph(lowered.graph, target)] == []
    assert op not in {o.op for o in lowered.graph.operations}
    want = compile_graph(graph, "onnxruntime").run(dict(feeds))
    got = graph.context.compute(lowered.graph, dict(feeds))
    for name, value in want.items():
        np.testing.assert_allclose(np.asarray(got[name]), np.asarray(value), rtol=1e-4,
                                   atol=1e-5)


def test_composition_that_does_not_fit_is_left_alone(tmp_path: Path) -> None:
    """gelu lacking, and erf too: no composition fits, the graph keeps gelu."""
    target = _target(tmp_path, _limits_without("gelu", "erf"))
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[4], data_type="float32")
    graph = b.build({"y": b.gelu(x)})
    lowered = lower(graph, target)
    assert lowered.graph is graph and lowered.notes == []


def test_float16_computed_in_float32(tmp_path: Path) -> None:
    """A target without float16 arithmetic (casts kept): every float16 op runs in float32,
    the result is float32 arithmetic rounded to float16 once at the end."""
    target = _target(tmp_path, _limits_without(drop_float16=True))
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[2, 3, 4], data_type="float16")
    y = b.softmax(b.add(b.tanh(x), b.constant(np.float16(0.25) * np.ones(4, np.float16))), 2)
    graph = b.build({"y": y})
    lowered = lower(graph, target)
    assert [v.line() for v in check_graph(lowered.graph, target)] == []
    assert any("computed in float32" in n for n in lowered.notes), lowered.notes
    feed = X.astype(np.float16)
    got = np.asarray(graph.context.compute(lowered.graph, {"x": feed})["y"])
    assert got.dtype == np.float16
    v = np.tanh(feed.astype(np.float64)) + 0.25
    want = np.exp(v) / np.exp(v).sum(axis=2, keepdims=True)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=1e-3)


def test_float16_gelu_lacking_composes_in_float32(tmp_path: Path) -> None:
    """Rules compose: gelu lacking and float16 lacking: gelu computed in float32 from erf."""
    limits = _limits_without("gelu", drop_float16=True)
    target = _target(tmp_path, limits)
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[2, 3, 4], data_type="float16")
    graph = b.build({"y": b.gelu(x)})
    lowered = lower(graph, target)
    assert [v.line() for v in check_graph(lowered.graph, target)] == []
    feed = X.astype(np.float16)
    got = np.asarray(graph.context.compute(lowered.graph, {"x": feed})["y"])
    v = feed.astype(np.float64)
    np.testing.assert_allclose(got.astype(np.float64), 0.5 * v * (1 + _erf(v / math.sqrt(2))),
                               rtol=1e-3, atol=1e-3)
