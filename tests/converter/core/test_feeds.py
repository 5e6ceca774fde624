"""converter/core/feeds.py: the one conversion between source-side values and a converted graph's
inputs and outputs (bool <-> uint8, float64 <-> float32), used by ConversionResult.run and
validation."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import onnx
from onnx import TensorProto, helper

import converter
from converter.core.feeds import graph_feeds, graph_value, source_array, source_outputs
from converter.core.ir import ValueInfo
from converter.core.webnn.dtypes import CARRIER_TYPES, DATA_TYPES, carrier_type
from converter.validate import graph_feeds as validate_graph_feeds
from tests.op_mappings.onnx.harness import IR_VERSION


def test_carrier_types() -> None:
    assert dict(CARRIER_TYPES) == {"bool": "uint8", "float64": "float32"}
    assert all(carrier_type(t) == t for t in DATA_TYPES)
    assert carrier_type("bool") == "uint8" and carrier_type("float64") == "float32"
    assert carrier_type("int16") is None and carrier_type("string") is None


def test_graph_value_casts_to_the_source_type_first() -> None:
    arr = graph_value([0.0, 0.5, 2.0], "bool")  # 0.5 is True as a bool, 0 as a uint8
    assert arr.dtype == np.uint8 and arr.tolist() == [0, 1, 1]
    f = np.array([1.0, 2.0], np.float32)
    assert graph_value(f, "float32") is f  # no copy when nothing changes
    assert graph_value(np.array([1.5], np.float64), "float64").dtype == np.float32
    assert source_array([1, 2], "int64").dtype == np.int64


class _Graph:
    inputs = {"a": SimpleNamespace(data_type="uint8"), "b": SimpleNamespace(data_type="float32")}


def test_graph_feeds_and_source_outputs() -> None:
    infos = [ValueInfo("a", "bool", (2,)), ValueInfo("b", "float64", (1,)),
             ValueInfo("unused", "float32", (0,))]
    feeds = graph_feeds(_Graph(), infos, {"a": [True, False], "b": [0.25], "unused": []})
    assert set(feeds) == {"a", "b"}
    assert feeds["a"].dtype == np.uint8 and feeds["b"].dtype == np.float32
    assert validate_graph_feeds is graph_feeds
    outs = source_outputs([ValueInfo("m", "bool", (2,)), ValueInfo("v", "float64", (1,)),
                           ValueInfo("i", "int32", (1,))],
                          {"i": np.array([3], np.int32), "v": np.array([0.5], np.float32),
                           "m": np.array([1, 0], np.uint8)})
    assert list(outs) == ["m", "v", "i"]
    assert outs["m"].dtype == bool and outs["m"].tolist() == [True, False]
    assert outs["v"].dtype == np.float64 and outs["i"].dtype == np.int32


def test_widened_inputs_and_outputs() -> None:
    """An int8 / bool input a target carries in int32 (rule widen-io): fed as int32 with the
    same values; an int32 output of an int8 / uint8 source value comes back as that type."""
    x = np.arange(-128, 128, dtype=np.int8)
    fed = graph_value(x, "int8", "int32", "x")
    assert fed.dtype == np.int32 and fed.tolist() == list(range(-128, 128))
    mask = graph_value([True, False], "bool", "int32", "m")
    assert mask.dtype == np.int32 and mask.tolist() == [1, 0]
    outs = source_outputs([ValueInfo("y", "int8", (3,)), ValueInfo("u", "uint8", (2,)),
                           ValueInfo("f", "float32", (1,))],
                          {"y": np.array([-128, 0, 127], np.int32),
                           "u": np.array([0, 255], np.int32), "f": np.array([1.5], np.float32)})
    assert outs["y"].dtype == np.int8 and outs["y"].tolist() == [-128, 0, 127]
    assert outs["u"].dtype == np.uint8 and outs["u"].tolist() == [0, 255]
    assert outs["f"].dtype == np.float32


def test_run_uses_source_types_at_the_boundary() -> None:
    nodes = [helper.make_node("Not", ["m"], ["n"]),
             helper.make_node("Cast", ["d"], ["y"], to=TensorProto.DOUBLE)]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("m", TensorProto.BOOL, [3]),
                     helper.make_tensor_value_info("d", TensorProto.DOUBLE, [2])],
        [helper.make_tensor_value_info("n", TensorProto.BOOL, [3]),
         helper.make_tensor_value_info("y", TensorProto.DOUBLE, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              ir_version=IR_VERSION)
    onnx.checker.check_model(model)
    result = converter.convert(model, target="spec")
    assert result.graph.inputs["m"].data_type == "uint8"
    out = result.run({"m": np.array([True, False, True]), "d": np.array([0.5, -2.0])})
    assert out["n"].dtype == bool and out["n"].tolist() == [False, True, False]
    assert out["y"].dtype == np.float64 and out["y"].tolist() == [0.5, -2.0]
