"""A small converted model for the tests of results and passes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

from converter.api import convert
from converter.core.webnn import MLGraph, MLGraphBuilder
from converter.results.result import ConversionResult

X = np.arange(6, dtype=np.float32).reshape(2, 3)
"""An input for `plus_one` and `times_two`."""


def plus_one(folder: Path) -> ConversionResult:
    """x + 1 (x float32 [2, 3]) converted from an ONNX file written into `folder`."""
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "one"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])])
    path = folder / "plus_one.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), path)
    return convert(path)


def times_two(result: ConversionResult) -> MLGraph:
    """x * 2 on `result`'s context, with `plus_one`'s input and output names."""
    b = MLGraphBuilder(result.graph.context)
    x = b.input("x", [2, 3], "float32")
    return b.build({"y": b.mul(x, b.constant(np.float32(2), "float32"))})
