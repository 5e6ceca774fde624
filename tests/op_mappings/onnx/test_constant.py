"""ONNX Constant vs onnxruntime, through the reader and through the registered handler."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import converter
from converter.core.ir import Node
from converter.importer import ImportContext
from op_mappings.onnx import lookup
from tests.op_mappings.onnx.harness import IR_VERSION, assert_close, run_ort

CASES = [
    {"value": numpy_helper.from_array(np.array([[1.5, 2.0]], np.float32))},
    {"value_float": 2.5},
    {"value_floats": [1.0, -2.0]},
    {"value_int": 7},
    {"value_ints": [1, 2, 3]},
]


@pytest.mark.parametrize("attrs", CASES, ids=lambda a: next(iter(a)))
def test_constant_feeding_add(attrs: dict[str, object]) -> None:
    const = helper.make_node("Constant", [], ["c"], **attrs)
    ident = helper.make_node("Identity", ["c"], ["y"])
    graph = helper.make_graph([const, ident], "g", [], [onnx.ValueInfoProto(name="y")])
    model = onnx.shape_inference.infer_shapes(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=IR_VERSION))
    expected = run_ort(model, {})
    result = converter.convert(model)
    assert_close(result.run({})["y"], expected["y"])
    assert result.report.to_dict()["ops"]["Constant"]["folded"]


def test_handler_decodes_attributes() -> None:
    node = Node("Constant", "", 13, "c", (), ("c",), {"value_ints": (4, 5)})
    handler = lookup("Constant", "", 13)
    assert handler is not None
    ctx = ImportContext.__new__(ImportContext)
    (value,) = handler.fn(ctx, node)
    np.testing.assert_array_equal(value, np.array([4, 5], np.int64))
