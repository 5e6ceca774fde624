"""converter.conversion.onnx_backend: the onnx.backend adapter (prepare/run, run_node, dtypes,
specialisation of shape-deciding graph inputs)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from converter.conversion.onnx_backend import WebNNBackend
from converter.core.errors import ConversionFailed
from tests.op_mappings.onnx.harness import IR_VERSION, run_ort


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
           outputs: list[onnx.ValueInfoProto]) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                             ir_version=IR_VERSION)


def test_prepare_run_list_and_dict_inputs_with_onnx_dtypes() -> None:
    model = _model([helper.make_node("Less", ["a", "b"], ["lt"]),
                    helper.make_node("Add", ["a", "b"], ["sum"])],
                   [helper.make_tensor_value_info("a", TensorProto.FLOAT, [3]),
                    helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])],
                   [helper.make_tensor_value_info("lt", TensorProto.BOOL, [3]),
                    helper.make_tensor_value_info("sum", TensorProto.FLOAT, [3])])
    a, b = np.array([1, 2, 3], np.float32), np.array([3, 2, 1], np.float32)
    rep = WebNNBackend.prepare(model, "CPU")
    out = rep.run([a, b])
    assert out.lt.dtype == np.bool_ and out[1].dtype == np.float32
    expected = run_ort(model, {"a": a, "b": b})
    np.testing.assert_array_equal(out.lt, expected["lt"])
    np.testing.assert_array_equal(rep.run({"a": a, "b": b})[1], expected["sum"])
    assert WebNNBackend.supports_device("CPU") and not WebNNBackend.supports_device("CUDA")


def test_run_node() -> None:
    node = helper.make_node("Relu", ["x"], ["y"])
    x = np.array([[-1.0, 2.0]], np.float32)
    (y,) = WebNNBackend.run_node(node, [x])
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_unsupported_op_fails_instead_of_silently_passing() -> None:
    model = _model([helper.make_node("Mystery", ["x"], ["y"], domain="com.example")],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    with pytest.raises(ConversionFailed):
        WebNNBackend.prepare(model)


def test_shape_input_is_specialised_per_value() -> None:
    """Reshape's shape is a graph input: conversion is deferred and pinned per value."""
    model = _model([helper.make_node("Reshape", ["x", "shape"], ["y"])],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                    helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    rep = WebNNBackend.prepare(model)
    assert rep.result is None and rep.pinned == ("shape",)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for shape in ([3, 2], [1, 6]):
        (y,) = rep.run([x, np.array(shape, np.int64)])
        np.testing.assert_array_equal(y, x.reshape(shape))
    with pytest.raises(ConversionFailed):
        WebNNBackend.prepare(model, specialize=False)
