"""converter.frontends.onnx.rawdata and its use by the reader: large numeric initializers are
read as views of the model's bytes (the file's memory map), the rest of the model parsed as
protobuf parses it. Oracles: protobuf itself (the skeleton parses to the original model with
those raw_data fields cleared), onnx.numpy_helper (the arrays), onnxruntime (the converted
graph's outputs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import converter
from converter.core.errors import InvalidModel
from converter.frontends.onnx.rawdata import split_raw_data, tensor_view


def _model() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((64, 32)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.standard_normal((32,)).astype(np.float16), "b16"),
             numpy_helper.from_array(np.arange(4096, dtype=np.uint8).reshape(64, 64) % 251,
                                     "u8"),
             numpy_helper.from_array(np.full(1, 0.5, np.float32), "small"),
             numpy_helper.from_array(np.arange(2048) % 2 == 0, "flags"),
             helper.make_tensor("i4", TensorProto.INT4, [4096], np.zeros(2048, np.uint8)
                                .tobytes(), raw=True)]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]),
             helper.make_node("Cast", ["b16"], ["b"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("Mul", ["a", "small"], ["y"], name="scale")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [2, 64])],
                              [helper.make_tensor_value_info("y", 1, [2, 32])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def test_skeleton_is_the_model_without_the_large_numeric_raw_data() -> None:
    model = _model()
    data = model.SerializeToString()
    split = split_raw_data(data, min_bytes=16)
    assert split is not None
    names = [t.name for t in model.graph.initializer]
    assert sorted(names[i] for i in split.views) == ["b16", "u8", "w"]  # not small/bool/int4
    expected = onnx.ModelProto()
    expected.CopyFrom(model)
    for i in split.views:
        expected.graph.initializer[i].ClearField("raw_data")
    parsed = onnx.ModelProto.FromString(split.skeleton)
    assert parsed == expected
    for i, view in split.views.items():
        tensor = model.graph.initializer[i]
        assert view.readonly and bytes(view) == tensor.raw_data
        arr = tensor_view(tensor.name, tensor.data_type, list(tensor.dims), view, "m")
        np.testing.assert_array_equal(arr, numpy_helper.to_array(tensor))
        assert arr.dtype == numpy_helper.to_array(tensor).dtype and not arr.flags.writeable


def test_unexpected_bytes_fall_back_to_a_full_parse() -> None:
    data = _model().SerializeToString()
    assert split_raw_data(data[:-7]) is None  # truncated
    assert split_raw_data(data + data) is None  # the graph field twice
    assert split_raw_data(data, min_bytes=10**9) is None  # nothing to leave out
    assert split_raw_data(b"\x0b\x01") is None  # a group
    assert split_raw_data(b"") is None


def test_wrong_raw_data_size_is_an_invalid_model() -> None:
    with pytest.raises(InvalidModel, match=r"tensor 'w' cannot be decoded: raw_data has 8 "
                       r"bytes, \[4\] float32 needs 16"):
        tensor_view("w", TensorProto.FLOAT, [4], memoryview(bytes(8)), "m")


def test_convert_reads_weights_from_the_file_map(tmp_path: Path) -> None:
    model = _model()
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    x = np.random.default_rng(1).standard_normal((2, 64)).astype(np.float32)
    result = converter.convert(str(path))
    assert not any("onnx.checker" in w for w in result.report.warnings)
    [w] = [c for c in result.graph.constants if c.shape == (64, 32)]
    base = w.value
    while isinstance(base, np.ndarray):
        base = base.base
    assert isinstance(base, memoryview) and base.readonly  # the file's map, not a copy
    expected = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {"x": x})[0]
    np.testing.assert_allclose(result.run({"x": x})["y"], expected, rtol=1e-5, atol=1e-5)
    from_bytes = converter.convert(path.read_bytes())
    np.testing.assert_allclose(from_bytes.run({"x": x})["y"], expected, rtol=1e-5, atol=1e-5)


def test_checker_still_sees_the_graph_and_sizes_are_still_checked(tmp_path: Path) -> None:
    model = _model()
    model.graph.node[3].attribute.append(helper.make_attribute("bogus", 1))
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    warnings = converter.convert(str(path)).report.warnings
    assert any("onnx.checker" in w and "bogus" in w for w in warnings), warnings
    short = _model()
    short.graph.initializer[0].raw_data = short.graph.initializer[0].raw_data[:-4]
    path.write_bytes(short.SerializeToString())
    with pytest.raises(InvalidModel, match="tensor 'w' cannot be decoded"):
        converter.convert(str(path))
