"""MLContext, MLTensor, dispatch and compute (spec sections 1.1, 1.2, 1.5)."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.webnn import (
    ML,
    MLContext,
    MLGraph,
    MLGraphBuilder,
    MLInvalidStateError,
    MLNotSupportedError,
    MLTypeError,
)


def _graph(ctx: MLContext) -> MLGraph:
    b = MLGraphBuilder(ctx)
    x = b.input("x", [2, 2], "float32")
    return b.build({"y": b.mul(x, b.constant(np.full((2, 2), 2, np.float32)))})


def test_context_options() -> None:
    ml = ML()
    assert ml.create_context(power_preference="low-power", device_type="gpu").accelerated
    with pytest.raises(MLTypeError, match="powerPreference"):
        ml.create_context(power_preference="fast")
    with pytest.raises(MLNotSupportedError, match="unknown backend"):
        ml.create_context(backend="nope")
    with pytest.raises(MLNotSupportedError, match="CPU only"):
        ml.create_context(device="cuda")


def test_dispatch_and_tensor_io() -> None:
    ctx = ML().create_context()
    graph = _graph(ctx)
    x = ctx.create_tensor([2, 2], "float32", writable=True)
    y = ctx.create_tensor([2, 2], "float32", readable=True)
    assert ctx.read_tensor(y).tolist() == [[0, 0], [0, 0]]  # zero-initialised
    ctx.write_tensor(x, np.array([[1, 2], [3, 4]], np.float32))
    ctx.dispatch(graph, {"x": x}, {"y": y})
    assert ctx.read_tensor(y).tolist() == [[2, 4], [6, 8]]
    # Raw bytes are accepted when their length matches exactly.
    ctx.write_tensor(x, np.ones((2, 2), np.float32).tobytes())
    ctx.dispatch(graph, {"x": x}, {"y": y})
    assert ctx.read_tensor(y).tolist() == [[2, 2], [2, 2]]


def test_tensor_rules() -> None:
    ctx = ML().create_context()
    graph = _graph(ctx)
    ro = ctx.create_tensor([2, 2], "float32", readable=True)
    wo = ctx.create_tensor([2, 2], "float32", writable=True)
    with pytest.raises(MLTypeError, match="not writable"):
        ctx.write_tensor(ro, np.zeros((2, 2), np.float32))
    with pytest.raises(MLTypeError, match="not readable"):
        ctx.read_tensor(wo)
    with pytest.raises(MLTypeError, match="bytes"):
        ctx.write_tensor(wo, b"\x00" * 3)
    with pytest.raises(MLTypeError, match="dtype int32 does not match float32"):
        ctx.write_tensor(wo, np.zeros((2, 2), np.int32))
    with pytest.raises(MLTypeError, match="more than once"):
        ctx.dispatch(graph, {"x": wo}, {"y": wo})
    wrong = ctx.create_tensor([4], "float32", writable=True)
    with pytest.raises(MLTypeError, match="graph expects float32\\[2, 2\\]"):
        ctx.dispatch(graph, {"x": wrong}, {"y": ro})
    with pytest.raises(MLTypeError, match="names"):
        ctx.dispatch(graph, {}, {"y": ro})
    other = ML().create_context().create_tensor([2, 2], "float32", readable=True)
    with pytest.raises(MLTypeError, match="another context"):
        ctx.dispatch(graph, {"x": wo}, {"y": other})
    ro.destroy()
    ro.destroy()  # idempotent
    with pytest.raises(MLInvalidStateError):
        ctx.read_tensor(ro)


def test_constant_tensors() -> None:
    ctx = ML().create_context()
    t = ctx.create_constant_tensor([3], "int32", np.array([1, 2, 3], np.int32))
    assert t.constant and not t.readable and not t.writable
    b = MLGraphBuilder(ctx)
    c = b.constant(t)
    t.destroy()  # destroying after constant() does not affect the graph
    graph = b.build({"y": b.neg(c)})
    assert ctx.compute(graph, {})["y"].tolist() == [-1, -2, -3]
    b2 = MLGraphBuilder(ctx)
    with pytest.raises(MLTypeError, match="destroyed"):
        b2.constant(t)
    with pytest.raises(MLTypeError, match="create_constant_tensor"):
        b2.constant(ctx.create_tensor([1], "float32"))
    x = ctx.create_tensor([2, 2], "float32", writable=True)
    y = ctx.create_constant_tensor([2, 2], "float32", np.zeros((2, 2), np.float32))
    with pytest.raises(MLTypeError, match="constant tensors"):
        ctx.dispatch(_graph(ctx), {"x": x}, {"y": y})


def test_compute_checks_inputs() -> None:
    ctx = ML().create_context()
    graph = _graph(ctx)
    with pytest.raises(MLTypeError, match="missing \\['x'\\]"):
        ctx.compute(graph, {})
    with pytest.raises(MLTypeError, match="float64\\[2, 2\\]"):
        ctx.compute(graph, {"x": np.zeros((2, 2))})
    assert ctx.compute(graph, {"x": [[1, 1], [1, 1]]})["y"].tolist() == [[2, 2], [2, 2]]
    with pytest.raises(MLTypeError, match="another context"):
        ML().create_context().compute(graph, {"x": [[1, 1], [1, 1]]})


def test_destroyed_graph_and_context() -> None:
    ctx = ML().create_context()
    graph = _graph(ctx)
    graph.destroy()
    with pytest.raises(MLInvalidStateError, match="destroyed"):
        ctx.compute(graph, {"x": np.zeros((2, 2), np.float32)})
    graph2 = _graph(ctx)
    ctx.destroy()
    assert ctx.lost
    with pytest.raises(MLInvalidStateError):
        ctx.compute(graph2, {"x": np.zeros((2, 2), np.float32)})
    with pytest.raises(MLInvalidStateError):
        ctx.create_tensor([1], "float32")
