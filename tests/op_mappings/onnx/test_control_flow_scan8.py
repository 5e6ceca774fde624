"""ONNX Scan opset 8 (batch axis 0, scan axis 1) vs onnxruntime: batches, several states
and scan inputs, reverse directions, constant sequence_lens (full and shorter: zero-padded
scan outputs), a body reading an outer-scope value; and the error for sequence_lens
computed at run time."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import converter
from converter.core.errors import ConversionFailed
from tests.op_mappings.onnx.harness import IR_VERSION, assert_close, run_ort

F = TensorProto.FLOAT


def _vi(name: str, shape: list[int], elem: int = F) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _body() -> onnx.GraphProto:
    """states (s [2], p [2]), scan elements (a [2], c [2]) -> s + a, p * c + w, outputs
    (s + a, a - c)."""
    nodes = [helper.make_node("Add", ["s", "a"], ["s_out"]),
             helper.make_node("Mul", ["p", "c"], ["pc"]),
             helper.make_node("Add", ["pc", "w"], ["p_out"]),  # w: outer scope
             helper.make_node("Identity", ["s_out"], ["o1"]),
             helper.make_node("Sub", ["a", "c"], ["o2"])]
    return helper.make_graph(
        nodes, "body", [_vi("s", [2]), _vi("p", [2]), _vi("a", [2]), _vi("c", [2])],
        [_vi("s_out", [2]), _vi("p_out", [2]), _vi("o1", [2]), _vi("o2", [2])])


def _model(batch: int, length: int, directions: list[int], lens: np.ndarray | None,
           lens_const: bool = True) -> onnx.ModelProto:
    inputs = [_vi("s0", [batch, 2]), _vi("p0", [batch, 2]), _vi("xa", [batch, length, 2]),
              _vi("xc", [batch, length, 2])]
    inits = [numpy_helper.from_array(np.array([0.5, -0.25], np.float32), "w")]
    if lens is not None:
        if lens_const:
            inits.append(numpy_helper.from_array(lens, "lens"))
        else:
            inputs.append(_vi("lens", [batch], TensorProto.INT64))
    node = helper.make_node("Scan", ["lens" if lens is not None else "", "s0", "p0", "xa", "xc"],
                            ["s", "p", "y1", "y2"], body=_body(), num_scan_inputs=2,
                            directions=directions)
    outputs = [_vi("s", [batch, 2]), _vi("p", [batch, 2]), _vi("y1", [batch, length, 2]),
               _vi("y2", [batch, length, 2])]
    graph = helper.make_graph([node], "g", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)],
                             ir_version=IR_VERSION)


def _feeds(batch: int, length: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    return {"s0": rng.normal(size=(batch, 2)).astype(np.float32),
            "p0": rng.normal(size=(batch, 2)).astype(np.float32),
            "xa": rng.normal(size=(batch, length, 2)).astype(np.float32),
            "xc": rng.normal(size=(batch, length, 2)).astype(np.float32)}


@pytest.mark.parametrize("lens", [None, [4, 4, 4], [4, 2, 1]], ids=str)
@pytest.mark.parametrize("directions", [[0, 0], [1, 0], [1, 1]], ids=str)
def test_scan8(directions: list[int], lens: list[int] | None) -> None:
    arr = None if lens is None else np.array(lens, np.int64)
    model = _model(3, 4, directions, arr)
    feeds = _feeds(3, 4)
    expected = run_ort(model, feeds)
    got = converter.convert(model).run(feeds)
    for name in ("s", "p", "y1", "y2"):
        assert_close(got[name], expected[name], what=f"Scan-8 output {name}")


def test_scan8_runtime_sequence_lens_is_rejected() -> None:
    model = _model(2, 3, [0, 0], np.array([3, 3], np.int64), lens_const=False)
    with pytest.raises(ConversionFailed, match="sequence_lens depends on graph inputs"):
        converter.convert(model)
