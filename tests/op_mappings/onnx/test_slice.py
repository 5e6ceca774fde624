"""ONNX Slice vs onnxruntime (clamping, negative indices, steps incl. negative, attribute
form)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, rand

BIG = 2**62
CASES = [
    ([1], [3], [0], [1]),
    ([0, 1], [2, -1], [0, 1], None),
    ([-3], [BIG], [-1], [1]),
    ([0], [5], [1], [2]),
    ([-1], [-BIG], [1], [-1]),
    ([3], [0], [1], [-2]),
    ([1, -1], [BIG, -BIG], [0, 2], [2, -3]),
]


@pytest.mark.parametrize("starts, ends, axes, steps", CASES, ids=str)
def test_slice13(starts: list[int], ends: list[int], axes: list[int],
                 steps: list[int] | None) -> None:
    inputs = {"x": rand(3, 5, 6), "starts": np.array(starts, np.int64),
              "ends": np.array(ends, np.int64), "axes": np.array(axes, np.int64)}
    if steps is not None:
        inputs["steps"] = np.array(steps, np.int64)
    check("Slice", inputs, opset=13, constants=["starts", "ends", "axes", "steps"])


def test_slice_no_axes() -> None:
    check("Slice", {"x": rand(4, 5), "starts": np.array([1, 2], np.int64),
                    "ends": np.array([3, 4], np.int64)}, opset=11, constants=["starts", "ends"])


def test_slice1_attributes() -> None:
    check("Slice", {"x": rand(4, 5)}, {"starts": [1], "ends": [-1], "axes": [1]}, opset=9)


def test_slice_folded() -> None:
    result = check("Slice", {"x": np.arange(10, dtype=np.int64), "s": np.array([2], np.int64),
                             "e": np.array([7], np.int64)}, opset=13, constants=["x", "s", "e"])
    assert result.report.to_dict()["ops"]["Slice"]["folded"]


def test_slice_to_empty_then_concat() -> None:
    """Phi-3's rotary embedding: x[..., :d] is rotated, the empty pass-through x[..., d:] is
    sliced off and concatenated back. The empty Slice result is a constant (it has no
    elements) and Concat drops it; a bool input gives a bool empty value."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    import converter
    from tests.op_mappings.onnx.harness import assert_close, run_ort

    def ints64(name: str, v: list[int]) -> onnx.TensorProto:
        return numpy_helper.from_array(np.array(v, np.int64), name)

    nodes = [helper.make_node("Slice", ["x", "zero", "eight", "last"], ["rot"]),
             helper.make_node("Slice", ["x", "eight", "big", "last"], ["pass"]),
             helper.make_node("Neg", ["rot"], ["rot2"]),
             helper.make_node("Concat", ["rot2", "pass"], ["y"], axis=-1),
             helper.make_node("Slice", ["b", "big", "big", "last"], ["b_empty"]),  # bool
             helper.make_node("Concat", ["b_empty", "b"], ["yb"], axis=-1)]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 8]),
                     helper.make_tensor_value_info("b", TensorProto.BOOL, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("yb", TensorProto.BOOL, None)],
        [ints64("zero", [0]), ints64("eight", [8]), ints64("big", [BIG]),
         ints64("last", [-1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=10)
    feeds = {"x": rand(1, 2, 3, 8), "b": rand(2, 3) > 0}
    expected = run_ort(model, feeds)
    result = converter.convert(model)
    got = result.run(feeds)
    for name in ("y", "yb"):
        assert_close(got[name], expected[name], what=name)
    assert result.report.to_dict()["ops"]["Slice"]["folded"] == ["Slice_1", "Slice_4"]
    assert "concat" not in [op.op for op in result.graph.operations]  # nothing to concat
