"""ONNX Split vs onnxruntime (equal, explicit sizes via attribute / input, num_outputs)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, rand


def test_split_equal() -> None:
    check("Split", {"x": rand(6, 4)}, {"axis": 0}, opset=11, outputs=("a", "b", "c"))


def test_split_attr_sizes() -> None:
    check("Split", {"x": rand(2, 7)}, {"axis": -1, "split": [2, 5]}, opset=11,
          outputs=("a", "b"))


@pytest.mark.parametrize("opset", [13, 18])
def test_split_input_sizes(opset: int) -> None:
    check("Split", {"x": rand(2, 7), "s": np.array([3, 1, 3], np.int64)}, {"axis": 1},
          opset=opset, outputs=("a", "b", "c"), constants=["s"])


def test_split_num_outputs_uneven() -> None:
    check("Split", {"x": rand(7, 2)}, {"axis": 0, "num_outputs": 3}, opset=18,
          outputs=("a", "b", "c"))


def test_zero_size_split_then_concat_drops_the_empty_part() -> None:
    """Split [3, 0] along axis 1 gives an empty second part; Concat of both is the input."""
    from onnx import TensorProto, helper, numpy_helper

    import converter
    from tests.op_mappings.onnx.harness import IR_VERSION, assert_close, run_ort

    nodes = [helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1),
             helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("Concat", ["r", "b"], ["y"], axis=1)]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.array([3, 0], np.int64), "sizes")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                              ir_version=IR_VERSION)
    x = np.random.default_rng(0).normal(size=(2, 3)).astype(np.float32)
    result = converter.convert(model)
    assert [op.op for op in result.graph.operations] == ["relu"]
    assert_close(result.run({"x": x})["y"], run_ort(model, {"x": x})["y"])
