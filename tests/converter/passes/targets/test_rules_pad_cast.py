"""pad-edge and fold-constant-cast (converter/passes/targets/rules_spatial.py, rules_casts.py)
beyond the shared cases: edge padding of other ranks and types against numpy's
np.pad(mode="edge"), declined where the target's limits lack the pieces; constant casts
folded with the spec's float -> int cast (truncation, saturation, NaN -> 0), the input
constant dropped unless something else reads it."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraphBuilder
from converter.passes.targets import load_target
from converter.passes.targets.passes import lower

TARGET = load_target("chromium-tflite")


@pytest.mark.parametrize(("dtype", "shape", "begin", "end"), [
    ("int8", (5,), [3], [1]),
    ("int32", (2, 3), [0, 4], [2, 0]),
    ("uint8", (1, 2, 2, 1, 3), [1, 0, 2, 1, 0], [0, 2, 0, 1, 1]),
])
def test_pad_edge_matches_numpy(dtype: str, shape: tuple[int, ...], begin: list[int],
                                end: list[int]) -> None:
    ctx = ML().create_context()
    x = np.arange(-3, np.prod(shape) - 3).reshape(shape).astype(dtype)
    b = MLGraphBuilder(ctx)
    graph = b.build({"y": b.pad(b.input("x", shape=list(shape), data_type=dtype), begin, end,
                                mode="edge")})
    lowered = lower(graph, TARGET)
    assert "pad-edge" in lowered.applied
    assert all(o.op != "pad" for o in lowered.graph.operations)
    got = ctx.compute(lowered.graph, {"x": x})["y"]
    np.testing.assert_array_equal(got, np.pad(x, list(zip(begin, end, strict=True)),
                                              mode="edge"))


def test_pad_edge_leaves_other_modes_and_unfitting_types_alone() -> None:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    x = b.input("x", shape=[2, 2], data_type="float32")
    graph = b.build({"y": b.pad(x, [1, 1], [1, 1], mode="reflection")})
    assert "pad-edge" not in lower(graph, TARGET).applied
    b = MLGraphBuilder(ctx)  # chromium-tflite's slice and expand take no uint64
    x = b.input("x", shape=[2, 2], data_type="uint64")
    graph = b.build({"y": b.pad(x, [1, 0], [0, 1], mode="edge")})
    assert "pad-edge" not in lower(graph, TARGET).applied


def test_fold_constant_cast_follows_the_spec_and_drops_the_input_constant() -> None:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    c = b.constant(np.array([np.nan, 300.7, -1e10, 2.5, -2.5, np.inf], np.float32))
    graph = b.build({"y": b.cast(c, "int8")})
    lowered = lower(graph, TARGET)
    assert lowered.applied == {"fold-constant-cast": 1}
    # the spec: NaN -> 0, out of range saturates, truncation toward zero
    want = np.array([0, 127, -128, 2, -2, 127], np.int8)
    np.testing.assert_array_equal(ctx.compute(lowered.graph, {})["y"], want)
    assert [(k.data_type, k.shape) for k in lowered.graph.constants] == [("int8", (6,))]


def test_fold_constant_cast_keeps_a_constant_something_else_reads() -> None:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    c = b.constant(np.array([1.5, np.inf], np.float16))
    graph = b.build({"y": b.cast(c, "float32"), "z": b.neg(c)})
    lowered = lower(graph, TARGET)
    assert lowered.applied["fold-constant-cast"] == 1
    assert sorted(k.data_type for k in lowered.graph.constants) == ["float16", "float32"]
    out = ctx.compute(lowered.graph, {})
    np.testing.assert_array_equal(out["y"], np.array([1.5, np.inf], np.float32))
    np.testing.assert_array_equal(out["z"], np.array([-1.5, -np.inf], np.float16))
