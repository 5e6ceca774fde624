"""float16 chains in float32 on the onnxruntime backend (converter/runtimes/onnxruntime/lowering/
float16_chains.py): inside a chain no intermediate rounding, at its exits (graph outputs,
operators native in float16, explicit casts) rounding to float16; the standard export keeps
WebNN's per-operation rounding. Oracles: float64 numpy, rounded to float16 once at the end
(the chain) or after every operation (WebNN, the standard export); the fused float16
Attention against the float64 attention of test_onnx_contrib_attention."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest
from onnx import TensorProto

import converter
from converter.core.webnn import ML, MLGraph, MLGraphBuilder, MLOperand
from converter.runtimes.onnxruntime.backend import OnnxRuntimeBackend
from converter.runtimes.onnxruntime.to_onnx import to_onnx
from converter.validate import compile_graph
from tests.converter.io.export.onnx_run import run_onnx
from tests.converter.io.export.test_onnx_contrib_attention import B, D, H, N, S, _oracle
from tests.op_mappings.onnx.harness import node_model

F16 = np.float16
Build = Callable[[MLGraphBuilder, MLOperand], MLOperand]


def _graph(x: np.ndarray, build: Build) -> MLGraph:
    b = MLGraphBuilder(ML().create_context())
    xin = b.input("x", shape=list(x.shape), data_type=x.dtype.name)
    return b.build({"y": build(b, xin)})


def _c(b: MLGraphBuilder, value: float | np.ndarray, shape: tuple[int, ...] = ()) -> MLOperand:
    return b.constant(np.broadcast_to(np.asarray(value, F16), shape).copy())


def _both(graph: MLGraph, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(onnxruntime backend, standard export) results."""
    backend = next(iter(compile_graph(graph, "onnxruntime").run({"x": x}).values()))
    return np.asarray(backend), run_onnx(to_onnx(graph), {"x": x})[0]


X = np.array([0.5, 0.25, -0.5, 1.5], F16)


def test_interior_rounding_is_dropped_the_standard_export_keeps_it() -> None:
    graph = _graph(X, lambda b, x: b.sub(b.add(x, _c(b, 1024.0)), _c(b, 1024.0)))
    backend, standard = _both(graph, X)
    x64 = X.astype(np.float64)
    np.testing.assert_array_equal(backend, (x64 + 1024 - 1024).astype(F16))  # chain: x
    per_op = ((x64 + 1024).astype(F16).astype(np.float64) - 1024).astype(F16)
    np.testing.assert_array_equal(standard, per_op)
    assert not np.array_equal(backend, standard)


def test_explicit_cast_rounds() -> None:
    graph = _graph(X, lambda b, x: b.cast(b.add(x, _c(b, 1024.0)), "float32"))
    backend, standard = _both(graph, X)
    want = (X.astype(np.float64) + 1024).astype(F16).astype(np.float32)
    np.testing.assert_array_equal(backend, want)
    np.testing.assert_array_equal(standard, want)


def test_float16_native_operator_reads_the_rounded_value() -> None:
    graph = _graph(X, lambda b, x: b.sub(b.max(b.add(x, _c(b, 1024.0)), _c(b, -6e4)),
                                         _c(b, 1024.0)))
    backend, _ = _both(graph, X)
    want = ((X.astype(np.float64) + 1024).astype(F16).astype(np.float64) - 1024).astype(F16)
    np.testing.assert_array_equal(backend, want)


def test_data_movement_runs_in_float32_and_rounds_once() -> None:
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, (2, 3, 8)).astype(F16)
    w = rng.uniform(-1, 1, (8, 8)).astype(F16)
    bias = rng.uniform(-1, 1, 8).astype(F16)

    def build(b: MLGraphBuilder, xin: MLOperand) -> MLOperand:
        h = b.add(b.matmul(xin, b.constant(w)), b.constant(bias))
        h = b.transpose(b.reshape(h, [2, 3, 2, 4]), permutation=[0, 2, 1, 3])
        left, right = b.split(h, 2, axis=1)
        h = b.concat([right, left], 1)
        return b.softmax(b.mul(h, _c(b, 3.0)), 3)

    graph = _graph(x, build)
    h64 = x.astype(np.float64) @ w.astype(np.float64) + bias.astype(np.float64)
    h64 = h64.reshape(2, 3, 2, 4).transpose(0, 2, 1, 3)
    h64 = np.concatenate([h64[:, 1:], h64[:, :1]], 1) * 3
    p = np.exp(h64 - h64.max(3, keepdims=True))
    want = p / p.sum(3, keepdims=True)
    backend, standard = _both(graph, x)
    chain_err = np.abs(backend.astype(np.float64) - want).max()
    per_op_err = np.abs(standard.astype(np.float64) - want).max()
    np.testing.assert_allclose(backend, want, rtol=0, atol=2 ** -11)  # half an ulp below 1
    assert chain_err <= per_op_err, (chain_err, per_op_err)
    lowered = OnnxRuntimeBackend("cpu").lower(graph)
    rounds = [n for n in lowered.graph.node if n.op_type == "Cast"
              and n.attribute[0].i == TensorProto.FLOAT16]
    assert [n.output[0] for n in rounds] == ["y"]  # rounded at the graph output only
    assert Counter(n.op_type for n in to_onnx(graph).graph.node)["Cast"] > 10


def test_float16_attention_is_fused_on_the_backend_only() -> None:
    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 1, (B, S, D)).astype(F16)
    w = rng.uniform(-0.5, 0.5, (D, 3 * N * H)).astype(F16)
    bias = rng.uniform(-0.5, 0.5, 3 * N * H).astype(F16)
    end = np.array([S, 3], np.int32)
    model = node_model("Attention", [("x", x), ("w", w), ("bias", bias), ("mask_index", end)],
                       {"num_heads": N}, outputs=("y",), constants=["w", "bias"],
                       domain="com.microsoft", opset=17)
    graph = converter.convert(model, target="spec").graph
    ops = Counter(n.op_type for n in OnnxRuntimeBackend("cpu").lower(graph).graph.node)
    assert ops["Attention"] == 1 and "Softmax" not in ops, ops
    assert "Attention" not in Counter(
        n.op_type for n in to_onnx(graph, contrib_ops=True).graph.node)
    want = _oracle(x, w, bias.astype(np.float64), end, 1 / np.sqrt(H), -10000.0)
    (got,) = compile_graph(graph, "onnxruntime").run({"x": x, "mask_index": end}).values()
    assert np.asarray(got).dtype == F16
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=0,
                               atol=2 ** -11 * max(1.0, float(np.abs(want).max())))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_a_single_operation_rounds_once_either_way(dtype: str) -> None:
    x = X.astype(dtype)
    graph = _graph(x, lambda b, xin: b.sqrt(b.add(xin, b.constant(np.ones(4, dtype)))))
    assert all(n.domain in ("", "ai.onnx") for n in to_onnx(graph).graph.node)
    backend, standard = _both(graph, x)
    np.testing.assert_array_equal(backend, np.sqrt(x.astype(np.float64) + 1).astype(dtype))
    np.testing.assert_array_equal(standard, backend)
