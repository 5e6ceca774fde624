"""If / Loop / Scan: inlined or unrolled at conversion time, compared with onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import converter
from converter.core.errors import BudgetExceeded, ConversionFailed
from tests.op_mappings.onnx.harness import IR_VERSION, assert_close, run_ort

F = TensorProto.FLOAT
RNG = np.random.default_rng(7)
X = RNG.normal(size=(2, 3)).astype(np.float32)


def _vi(name: str, shape: list[int], elem: int = F) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
           outputs: list[onnx.ValueInfoProto], inits: list[onnx.TensorProto] = (),
           opset: int = 18) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=IR_VERSION)


def _if_model() -> onnx.ModelProto:
    then = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [],
                             [_vi("t", [2, 3])])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                              [_vi("e", [2, 3])])
    node = helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)
    return _model([node], [_vi("x", [2, 3]), _vi("c", [], TensorProto.BOOL)], [_vi("y", [2, 3])])


@pytest.mark.parametrize("cond", [True, False])
def test_if_pinned_condition_inlines_one_branch(cond: bool) -> None:
    model = _if_model()
    result = converter.convert(model, pin_inputs={"c": np.array(cond)})
    assert [op.op for op in result.graph.operations] == ["relu" if cond else "neg"]
    expected = run_ort(model, {"x": X, "c": np.array(cond)})
    assert_close(result.run({"x": X})["y"], expected["y"])


def test_if_data_dependent_condition_selects_with_where() -> None:
    model = _if_model()
    result = converter.convert(model)
    assert "where" in [op.op for op in result.graph.operations]
    for cond in (True, False):
        feeds = {"x": X, "c": np.array(cond)}
        assert_close(result.run(feeds)["y"], run_ort(model, feeds)["y"])


def test_if_constant_condition_from_folding_and_outer_scope() -> None:
    """The condition folds (Shape -> Gather -> Equal) and the branch reads outer values."""
    inits = [numpy_helper.from_array(np.array(1, np.int64), "one"),
             numpy_helper.from_array(np.array(2, np.int64), "two")]
    then = helper.make_graph([helper.make_node("Add", ["x", "x"], ["t"])], "then", [],
                             [_vi("t", [2, 3])])
    other = helper.make_graph([helper.make_node("Sub", ["x", "x"], ["e"])], "else", [],
                              [_vi("e", [2, 3])])
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "one"], ["d"], axis=0),
             helper.make_node("Equal", ["d", "two"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)]
    model = _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])], inits)
    result = converter.convert(model)
    assert [op.op for op in result.graph.operations] == ["sub"]
    assert_close(result.run({"x": X})["y"], run_ort(model, {"x": X})["y"])


def _loop_body() -> onnx.GraphProto:
    """acc += x * i; scan output acc; condition passed through."""
    return helper.make_graph([
        helper.make_node("Cast", ["i"], ["fi"], to=F),
        helper.make_node("Mul", ["x", "fi"], ["xi"]),
        helper.make_node("Add", ["acc", "xi"], ["acc2"]),
        helper.make_node("Identity", ["cin"], ["cout"]),
        helper.make_node("Identity", ["acc2"], ["sc"]),
    ], "body", [_vi("i", [], TensorProto.INT64), _vi("cin", [], TensorProto.BOOL),
                _vi("acc", [2, 3])],
        [_vi("cout", [], TensorProto.BOOL), _vi("acc2", [2, 3]), _vi("sc", [2, 3])])


def _loop_model(trip: int) -> onnx.ModelProto:
    inits = [numpy_helper.from_array(np.array(trip, np.int64), "M"),
             numpy_helper.from_array(np.array(True), "C"),
             numpy_helper.from_array(np.zeros((2, 3), np.float32), "z")]
    node = helper.make_node("Loop", ["M", "C", "z"], ["y", "s"], body=_loop_body(), name="loop")
    return _model([node], [_vi("x", [2, 3])], [_vi("y", [2, 3]), _vi("s", [trip, 2, 3])], inits)


def test_loop_with_constant_trip_count_unrolls() -> None:
    model = _loop_model(4)
    result = converter.convert(model)
    expected = run_ort(model, {"x": X})
    got = result.run({"x": X})
    assert_close(got["y"], expected["y"])
    assert_close(got["s"], expected["s"])
    assert result.report.to_dict()["ops"]["Loop"]["decomposed"] == ["loop"]


def test_loop_condition_stops_early() -> None:
    """No trip count; the condition (i < 2) folds each iteration."""
    body = helper.make_graph([
        helper.make_node("Add", ["acc", "x"], ["acc2"]),
        helper.make_node("Less", ["i", "two"], ["cout"]),
    ], "body", [_vi("i", [], TensorProto.INT64), _vi("cin", [], TensorProto.BOOL),
                _vi("acc", [2, 3])], [_vi("cout", [], TensorProto.BOOL), _vi("acc2", [2, 3])],
        [numpy_helper.from_array(np.array(2, np.int64), "two")])
    inits = [numpy_helper.from_array(np.array(True), "C"),
             numpy_helper.from_array(np.zeros((2, 3), np.float32), "z")]
    node = helper.make_node("Loop", ["", "C", "z"], ["y"], body=body)
    model = _model([node], [_vi("x", [2, 3])], [_vi("y", [2, 3])], inits)
    result = converter.convert(model)
    assert_close(result.run({"x": X})["y"], run_ort(model, {"x": X})["y"])


def test_loop_bound_and_data_dependent_trip_count_errors() -> None:
    with pytest.raises(BudgetExceeded, match=r"Loop 'loop'.*5,000 iterations.*4,096"):
        converter.convert(_loop_model(5000))
    inits = [numpy_helper.from_array(np.array(True), "C"),
             numpy_helper.from_array(np.zeros((2, 3), np.float32), "z")]
    node = helper.make_node("Loop", ["M", "C", "z"], ["y", "s"], body=_loop_body(), name="dyn")
    model = _model([node], [_vi("x", [2, 3]), _vi("M", [], TensorProto.INT64)],
                   [_vi("y", [2, 3]), _vi("s", [3, 2, 3])], inits)
    with pytest.raises(ConversionFailed) as info:
        converter.convert(model)
    assert info.value.errors[0].reason_code == "requires_constant_input"
    assert info.value.errors[0].node_name == "dyn"


@pytest.mark.parametrize(("in_axis", "in_dir", "out_axis", "out_dir"),
                         [(0, 0, 0, 0), (1, 1, 1, 0), (0, 1, 1, 1)])
def test_scan_cumulative_sum(in_axis: int, in_dir: int, out_axis: int, out_dir: int) -> None:
    """state += slice; scan output = state * 2."""
    body = helper.make_graph([
        helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
        helper.make_node("Add", ["s_out", "s_out"], ["y_t"]),
    ], "body", [_vi("s_in", [3]), _vi("x_t", [3])], [_vi("s_out", [3]), _vi("y_t", [3])])
    shape = [4, 3] if in_axis == 0 else [3, 4]
    node = helper.make_node("Scan", ["init", "seq"], ["final", "ys"], body=body,
                            num_scan_inputs=1, scan_input_axes=[in_axis],
                            scan_input_directions=[in_dir], scan_output_axes=[out_axis],
                            scan_output_directions=[out_dir])
    out_shape = [4, 3] if out_axis == 0 else [3, 4]
    model = _model([node], [_vi("init", [3]), _vi("seq", shape)],
                   [_vi("final", [3]), _vi("ys", out_shape)])
    feeds = {"init": RNG.normal(size=3).astype(np.float32),
             "seq": RNG.normal(size=shape).astype(np.float32)}
    result = converter.convert(model)
    expected = run_ort(model, feeds)
    got = result.run(feeds)
    assert_close(got["final"], expected["final"])
    assert_close(got["ys"], expected["ys"])
