"""The ONNX importer's empty values: nodes reading an empty constant (a zero-size tensor: it has
no elements, so its value is known) are computed at conversion time when their result does not
depend on the values of their other inputs; compared with onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import converter
from converter.core.errors import ConversionFailed
from tests.op_mappings.onnx.harness import assert_close, rand, run_ort


def _model(nodes: list[onnx.NodeProto], inputs: dict[str, tuple[int, list[int]]],
           outputs: list[str], inits: dict[str, np.ndarray]) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [onnx.ValueInfoProto(name=o) for o in outputs],
        [numpy_helper.from_array(v, n) for n, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                              ir_version=10)
    return onnx.shape_inference.infer_shapes(model)


def _check(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> converter.ConversionResult:
    expected = run_ort(model, feeds)
    result = converter.convert(model)
    got = result.run(feeds)
    assert set(got) == set(expected)
    for name, want in expected.items():
        assert_close(got[name], want, what=name)
    return result


def _statuses(result: converter.ConversionResult) -> dict[str, str]:
    return {n.name: n.status for n in result.report.nodes}


def test_nodes_reading_an_empty_constant_fold() -> None:
    """An empty Slice result read by elementwise ops with graph operands (broadcast against
    the empty axis: the results are empty whatever the operands hold), Shape, Cast and a
    MatMul over an empty inner axis (a non-empty result: zeros), then Concat, which drops
    the empty values. (A reduction over an empty axis folds too, to the spec's identity
    value; onnxruntime gives an empty result there, so it is not compared.)"""
    x = (TensorProto.FLOAT, [2, 3, 4])
    s = (TensorProto.FLOAT, [2, 3, 1])
    nodes = [helper.make_node("Slice", ["x", "four", "big", "last"], ["e"]),    # [2, 3, 0]
             helper.make_node("Mul", ["e", "s"], ["m"], name="mul"),
             helper.make_node("Less", ["m", "s"], ["lt"], name="less"),        # bool
             helper.make_node("Where", ["lt", "m", "s"], ["w"], name="where"),
             helper.make_node("Cast", ["w"], ["c"], to=TensorProto.FLOAT16, name="cast"),
             helper.make_node("Cast", ["c"], ["c32"], to=TensorProto.FLOAT, name="cast32"),
             helper.make_node("Concat", ["c32", "x"], ["y"], axis=-1, name="concat"),
             helper.make_node("Shape", ["m"], ["shape"], name="shape"),
             helper.make_node("Transpose", ["e"], ["et"], perm=[0, 2, 1], name="t"),
             helper.make_node("MatMul", ["e", "et"], ["mm"], name="matmul"),  # [2, 3, 3] 0s
             helper.make_node("Add", ["mm", "s"], ["y3"], name="add3")]
    inits = {"four": np.array([4], np.int64), "big": np.array([2**62], np.int64),
             "last": np.array([-1], np.int64)}
    model = _model(nodes, {"x": x, "s": s}, ["y", "shape", "y3"], inits)
    result = _check(model, {"x": rand(2, 3, 4), "s": rand(2, 3, 1, seed=1)})
    status = _statuses(result)
    for name in ("mul", "less", "where", "cast", "cast32", "shape", "t", "matmul"):
        assert status[name] == "folded", name
    assert [status[n] for n in ("concat", "add3")] == ["native"] * 2


def test_results_that_depend_on_the_operands_are_not_folded() -> None:
    """A Concat of an empty constant and an operand is the operand (its handler drops the
    empty input); a node whose result could depend on an operand's values is left to its
    handler: here Expand, whose shape input (a graph input) must be constant, fails as it
    would without the empty value."""
    nodes = [helper.make_node("Slice", ["x", "four", "big", "last"], ["e"]),
             helper.make_node("Concat", ["e", "x"], ["y"], axis=-1, name="concat"),
             helper.make_node("Expand", ["e", "n"], ["big_e"], name="expand")]
    inits = {"four": np.array([4], np.int64), "big": np.array([2**62], np.int64),
             "last": np.array([-1], np.int64)}
    model = _model(nodes[:2], {"x": (TensorProto.FLOAT, [2, 4])}, ["y"], inits)
    result = _check(model, {"x": rand(2, 4)})
    assert _statuses(result)["concat"] == "native"
    model = _model(nodes, {"x": (TensorProto.FLOAT, [2, 4]), "n": (TensorProto.INT64, [2])},
                   ["y", "big_e"], inits)
    with pytest.raises(ConversionFailed, match="expand.*must be known at conversion time"):
        converter.convert(model)
