"""converter.passes.targets.rules_gather: which gatherElements operations the rule rewrites for
chromium-tflite and what it leaves in the graph (the values are checked in test_passes.py
against numpy on the cases of cases.py, out-of-range indices here)."""

from __future__ import annotations

import numpy as np

from converter.core.webnn import ML, MLGraphBuilder
from converter.passes.targets import load_target
from converter.passes.targets.passes import lower

TARGET = load_target("chromium-tflite")


def test_constant_indices_are_left_alone() -> None:
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", [3, 4], "float32")
    graph = b.build({"y": b.gather_elements(x, b.constant(np.zeros((2, 4), np.int32)))})
    assert not lower(graph, TARGET).changed


def test_run_time_indices_become_one_flat_gather_and_clamp_like_the_reference() -> None:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    x = b.input("x", [3, 4], "float32")
    i = b.input("i", [2, 4], "int64")
    graph = b.build({"y": b.gather_elements(x, i, axis=0)})
    lowered = lower(graph, TARGET)
    ops = [o.op for o in lowered.graph.operations]
    assert "gatherElements" not in ops and ops.count("gather") == 1
    gather = next(o for o in lowered.graph.operations if o.op == "gather")
    assert list(gather.args[0].shape) == [12] and gather.args[1].data_type == "int32"
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([[7, -9, 2, -1], [2**40, -(2**40), 0, 1]], np.int64)  # out of range too
    want = ctx.compute(graph, {"x": data, "i": idx})["y"]
    clamped = np.clip(idx, -3, 2)
    np.testing.assert_array_equal(
        want, np.take_along_axis(data, np.where(clamped < 0, clamped + 3, clamped), 0))
    np.testing.assert_array_equal(ctx.compute(lowered.graph, {"x": data, "i": idx})["y"], want)
