"""The ONNX reader: defaults, free dimensions, pinning, constants, safety of external data,
corrupt files."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from converter.core.errors import InvalidModel, UnresolvedDimensions
from converter.frontends.onnx.reader import read_onnx


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
           outputs: list[str], inits: list[onnx.TensorProto] = (), opset: int = 13
           ) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs,
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                               for o in outputs], list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=10)


def _gemm_model() -> onnx.ModelProto:
    w = numpy_helper.from_array(np.ones((4, 2), np.float32), "w")
    node = helper.make_node("Gemm", ["x", "w"], ["y"], name="fc")
    return _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
                  ["y"], [w])


def test_defaults_filled_from_schema() -> None:
    g = read_onnx(_gemm_model(), free_dims={"N": 2})
    (node,) = g.nodes
    assert (node.op_type, node.domain, node.version, node.name) == ("Gemm", "", 13, "fc")
    assert dict(node.attrs) == {"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0}
    assert g.inputs[0].shape == (2, 4)
    assert g.inputs[0].declared_shape == ("N", 4)
    np.testing.assert_array_equal(g.constants["w"], np.ones((4, 2), np.float32))


def test_defaults_depend_on_opset() -> None:
    node = helper.make_node("Softmax", ["x"], ["y"])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    assert read_onnx(_model([node], [x], ["y"], opset=11)).nodes[0].attrs["axis"] == 1
    assert read_onnx(_model([node], [x], ["y"], opset=13)).nodes[0].attrs["axis"] == -1


def test_explicit_attrs_kept_and_strings_decoded() -> None:
    node = helper.make_node("Gelu", ["x"], ["y"], approximate="tanh")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
    g = read_onnx(_model([node], [x], ["y"], opset=20))
    assert g.nodes[0].attrs["approximate"] == "tanh"
    assert g.nodes[0].name == "Gelu_0"


def test_unresolved_dims_listed_together() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, None])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, ["seq"])
    node = helper.make_node("Add", ["x", "z"], ["y"])
    model = _model([node], [x, z], ["y"])
    with pytest.raises(UnresolvedDimensions) as info:
        read_onnx(model)
    msg = str(info.value)
    for part in ("x[2] (unnamed dimension)", "z[0] (free dimension 'seq')", "free_dims"):
        assert part in msg
    assert "'batch'" not in msg  # a batch: converted at 1
    with pytest.raises(UnresolvedDimensions, match=r"x\[2\]"):
        read_onnx(model, free_dims={"batch": 1, "seq": 4})
    g = read_onnx(model, free_dims={"seq": 4}, input_shapes={"x": [1, 3, 4]})
    assert [vi.shape for vi in g.inputs] == [(1, 3, 4), (4,)]


def test_bad_overrides() -> None:
    model = _gemm_model()
    with pytest.raises(InvalidModel, match="not free dimensions"):
        read_onnx(model, free_dims={"batch": 1})
    with pytest.raises(InvalidModel, match="not graph inputs"):
        read_onnx(model, input_shapes={"nope": [1]})
    with pytest.raises(InvalidModel, match="contradicts"):
        read_onnx(model, input_shapes={"x": [2, 5]})
    with pytest.raises(InvalidModel, match="rank"):
        read_onnx(model, input_shapes={"x": [2]})
    with pytest.raises(InvalidModel, match="positive integer"):
        read_onnx(model, free_dims={"N": -1})  # 0 is allowed: an empty dimension


def test_pin_inputs() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    sr = helper.make_tensor_value_info("sr", TensorProto.INT64, [])
    node = helper.make_node("Add", ["x", "x"], ["y"])
    g = read_onnx(_model([node], [x, sr], ["y"]), pin_inputs={"sr": 16000})
    assert [vi.name for vi in g.inputs] == ["x"]
    assert g.constants["sr"].dtype == np.int64 and g.constants["sr"].shape == ()
    with pytest.raises(InvalidModel, match="shape"):
        read_onnx(_model([node], [x, sr], ["y"]), pin_inputs={"x": [1.0, 2.0, 3.0]})


def test_constant_nodes_become_constants() -> None:
    c = helper.make_node("Constant", [], ["c"], value_ints=[1, 2])
    g = read_onnx(_model([c], [], ["c"]))
    np.testing.assert_array_equal(g.constants["c"], np.array([1, 2], np.int64))


def test_initializers_are_not_inputs() -> None:
    model = _gemm_model()
    model.graph.input.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 2]))
    g = read_onnx(model, free_dims={"N": 1})
    assert [vi.name for vi in g.inputs] == ["x"]


def test_undefined_input_rejected() -> None:
    node = helper.make_node("Relu", ["ghost"], ["y"])
    with pytest.raises(InvalidModel, match="ghost"):
        read_onnx(_model([node], [], ["y"]))
    # also in a graph that is not in topological order: one line naming the node
    nodes = [helper.make_node("Neg", ["a"], ["b"], name="neg"),
             helper.make_node("Add", ["a", "ghost"], ["y"], name="add"),
             helper.make_node("Relu", ["x"], ["a"], name="relu")]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    with pytest.raises(InvalidModel, match=r"node 'add' \(Add\) reads \['ghost'\]") as exc:
        read_onnx(_model(nodes, [x], ["y", "b"]))
    assert "\n" not in str(exc.value)


def test_nodes_out_of_order_are_sorted_stably() -> None:
    """A graph whose nodes are not in topological order (onnxruntime's float16 tool writes
    such graphs; onnxruntime runs them) is read in a stable topological order: of the nodes
    whose inputs are ready, the first in the file; unnamed nodes keep their file position
    in their names. The converted graph matches onnxruntime."""
    import onnxruntime as ort

    import converter

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    nodes = [helper.make_node("Add", ["b", "x"], ["c"]),        # 0: needs b
             helper.make_node("Relu", ["x"], ["a"]),            # 1
             helper.make_node("Mul", ["a", "a"], ["b"]),        # 2: needs a
             helper.make_node("Sigmoid", ["x"], ["d"]),         # 3
             helper.make_node("Sub", ["c", "d"], ["e"])]        # 4: needs c, d
    model = _model(nodes, [x], ["e", "b"])
    g = read_onnx(model)
    assert [n.name for n in g.nodes] == ["Relu_1", "Mul_2", "Add_0", "Sigmoid_3", "Sub_4"]
    assert [n.index for n in g.nodes] == [1, 2, 0, 3, 4]
    # a graph already in order keeps the file order, independent nodes included
    in_order = _model([nodes[3], nodes[1], nodes[2], nodes[0], nodes[4]], [x], ["e"])
    assert [n.op_type for n in read_onnx(in_order).nodes] == ["Sigmoid", "Relu", "Mul", "Add",
                                                              "Sub"]
    feed = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    expected = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, {"x": feed})
    got = converter.convert(model).run({"x": feed})
    for name, want in zip(["e", "b"], expected, strict=True):
        np.testing.assert_allclose(got[name], want, rtol=1e-6, atol=1e-6)


def test_sorting_follows_values_read_by_subgraphs() -> None:
    """An If whose branch reads an outer value produced by a later node comes after it."""
    then = helper.make_graph([helper.make_node("Identity", ["a"], ["t"])], "then", [],
                             [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])])
    nodes = [helper.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other),
             helper.make_node("Relu", ["x"], ["a"])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
              helper.make_tensor_value_info("cond", TensorProto.BOOL, [])]
    g = read_onnx(_model(nodes, inputs, ["y"]))
    assert [n.op_type for n in g.nodes] == ["Relu", "If"]


def test_cycle_rejected() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="first"),
             helper.make_node("Add", ["r", "b"], ["a"], name="loop_a"),
             helper.make_node("Neg", ["a"], ["b"], name="loop_b"),
             helper.make_node("Sigmoid", ["b"], ["y"], name="after")]
    with pytest.raises(InvalidModel, match=r"node 'loop_a' \(Add\) is on a cycle") as exc:
        read_onnx(_model(nodes, [x], ["y"]))
    assert "\n" not in str(exc.value)
    selfloop = [helper.make_node("Add", ["x", "s"], ["s"], name="self")]
    with pytest.raises(InvalidModel, match="'self' .* cycle"):
        read_onnx(_model(selfloop, [x], ["s"]))


# -- files ------------------------------------------------------------------------------


def test_truncated_file(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    data = _gemm_model().SerializeToString()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InvalidModel, match="m.onnx"):
        read_onnx(path)


def test_garbage_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "junk.onnx"
    path.write_bytes(b"\xff\xfe not a protobuf at all")
    with pytest.raises(InvalidModel, match="junk.onnx"):
        read_onnx(path)
    with pytest.raises(InvalidModel, match="does not exist"):
        read_onnx(tmp_path / "missing.onnx")


def _save_external(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    path = folder / "m.onnx"
    onnx.save_model(_gemm_model(), path, save_as_external_data=True,
                    all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
    return path


def _set_location(path: Path, location: str) -> None:
    model = onnx.load(path, load_external_data=False)
    for entry in model.graph.initializer[0].external_data:
        if entry.key == "location":
            entry.value = location
    path.write_bytes(model.SerializeToString())


def test_external_data_inside_folder(tmp_path: Path) -> None:
    path = _save_external(tmp_path)
    g = read_onnx(path, free_dims={"N": 1})
    np.testing.assert_array_equal(np.asarray(g.constants["w"]), np.ones((4, 2), np.float32))


def test_external_data_in_memory_needs_path(tmp_path: Path) -> None:
    path = _save_external(tmp_path)
    with pytest.raises(InvalidModel, match="model file path"):
        read_onnx(onnx.load(path, load_external_data=False), free_dims={"N": 1})


@pytest.mark.parametrize("location", ["../weights.bin", "sub/../../weights.bin",
                                      "..\\weights.bin"])
def test_external_data_traversal_rejected(tmp_path: Path, location: str) -> None:
    path = _save_external(tmp_path)
    (tmp_path / "weights.bin").write_bytes((path.parent / "weights.bin").read_bytes())
    _set_location(path, location)
    with pytest.raises(InvalidModel, match="leaves the model's folder"):
        read_onnx(path, free_dims={"N": 1})


def test_external_data_absolute_rejected(tmp_path: Path) -> None:
    path = _save_external(tmp_path)
    _set_location(path, str((path.parent / "weights.bin").resolve()))
    with pytest.raises(InvalidModel, match="absolute"):
        read_onnx(path, free_dims={"N": 1})


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_external_data_symlink_escape_rejected(tmp_path: Path) -> None:
    path = _save_external(tmp_path)
    outside = tmp_path / "secret.bin"
    outside.write_bytes((path.parent / "weights.bin").read_bytes())
    (path.parent / "link.bin").symlink_to(outside)
    _set_location(path, "link.bin")
    with pytest.raises(InvalidModel, match="outside the model's folder"):
        read_onnx(path, free_dims={"N": 1})


def test_external_data_range_checked(tmp_path: Path) -> None:
    path = _save_external(tmp_path)
    (path.parent / "weights.bin").write_bytes(b"\0" * 8)
    with pytest.raises(InvalidModel, match="outside|bytes"):
        read_onnx(path, free_dims={"N": 1})
