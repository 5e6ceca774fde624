"""converter.passes.targets.check: one test per kind of violation, each against hand-written
`opSupportLimits()` (a limits JSON file, as `--target LIMITS.json` gives), and the built-in
profiles on graphs whose verdict follows from Chromium's sources (Core ML takes no int64)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraphBuilder
from converter.passes.targets import Target, load_target
from converter.passes.targets.check import check_graph, format_violations, summary

T = {"dataTypes": ["float32", "int32"], "rankRange": {"min": 0, "max": 4}}
IDX = {"dataTypes": ["int32"], "rankRange": {"min": 0, "max": 4}}
BASE: dict[str, Any] = {
    "preferredInputLayout": "nchw", "maxTensorByteLength": 1 << 20,
    "input": T, "constant": {"dataTypes": ["float32", "int32", "int64"],
                             "rankRange": {"min": 0, "max": 4}}, "output": T,
    "add": {"a": T, "b": T, "output": T},
    "relu": {"input": {"dataTypes": ["float32"], "rankRange": {"min": 0, "max": 4}},
             "output": {"dataTypes": ["float32"], "rankRange": {"min": 0, "max": 4}}},
    "gatherElements": {"input": T, "indices": IDX, "output": T},
    "reshape": {"input": T, "output": T},
    "split": {"input": T, "outputs": T},
}


def _target(tmp_path: Path, **changes: Any) -> Target:
    limits = {**BASE, **changes}
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(limits))
    return load_target(path)


def _builder() -> MLGraphBuilder:
    return MLGraphBuilder(ML().create_context())


def test_a_graph_inside_the_limits_has_no_violation(tmp_path: Path) -> None:
    b = _builder()
    x = b.input("x", [2, 3], "float32")
    g = b.build({"y": b.relu(b.add(x, x))})
    assert check_graph(g, _target(tmp_path)) == []


def test_operator_missing(tmp_path: Path) -> None:
    b = _builder()
    x = b.input("x", [2, 3], "float32")
    g = b.build({"y": b.sigmoid(x)})
    (v,) = check_graph(g, _target(tmp_path))
    assert (v.kind, v.op) == ("op", "sigmoid")
    assert v.line() == "hand lacks operator sigmoid (operation #0 sigmoid)"


def test_operand_data_type_names_op_role_type_and_operand(tmp_path: Path) -> None:
    b = _builder()
    x = b.input("x", [2, 3], "float32")
    idx = b.input("idx", [2, 3], "int32")
    g = b.build({"y": b.gather_elements(x, idx)})
    assert check_graph(g, _target(tmp_path)) == []
    t = _target(tmp_path, gatherElements={"input": T, "indices": {"dataTypes": ["uint32"]},
                                          "output": T})
    (v,) = check_graph(g, t)
    assert (v.kind, v.op, v.role, v.data_type, v.operand) == (
        "dtype", "gatherElements", "indices", "int32", "idx")
    assert v.line().startswith(
        "hand lacks gatherElements indices int32 (operand 'idx', operation #0 gatherElements")
    assert summary([v, v]) == ["gatherElements indices int32"]


def test_output_role_data_type(tmp_path: Path) -> None:
    b = _builder()
    x = b.input("x", [4], "int32")
    g = b.build({"y": b.relu(b.add(x, x))})
    vs = check_graph(g, _target(tmp_path))
    # relu's input and output are int32; the hand limits take float32 only.
    assert [(v.op, v.role, v.data_type) for v in vs] == [("relu", "input", "int32"),
                                                         ("relu", "output", "int32")]
    assert vs[0].operand == "operation #0 add" and vs[1].operand == "y"


def test_list_outputs_role(tmp_path: Path) -> None:
    b = _builder()
    x = b.input("x", [4], "float32")
    a, c = b.split(x, 2)
    g = b.build({"a": a, "c": c})
    assert check_graph(g, _target(tmp_path)) == []
    t = _target(tmp_path, split={"input": T, "outputs": {"dataTypes": ["int32"]}})
    assert [(v.role, v.operand) for v in check_graph(g, t)] == [("outputs", "a"),
                                                                 ("outputs", "c")]


def test_rank_outside_range(tmp_path: Path) -> None:
    b = _builder()
    x = b.input("x", [2, 3], "float32")
    g = b.build({"y": b.reshape(x, [1, 1, 1, 2, 3])})
    vs = check_graph(g, _target(tmp_path))
    assert [(v.kind, v.role, v.rank) for v in vs] == [("rank", "output", 5), ("output", "", 5)]
    assert "reshape output float32 of rank 5" in vs[0].line() and "rank 0..4" in vs[0].line()


def test_graph_input_output_and_constant_data_types(tmp_path: Path) -> None:
    b = _builder()
    x = b.input("x", [3], "uint32")
    k = b.constant(np.arange(3, dtype=np.int64), "int64")
    g = b.build({"y": b.add(b.cast(x, "int64"), k)})
    t = _target(tmp_path, cast={"input": {"dataTypes": ["uint32"]},
                                "output": {"dataTypes": ["int64"]}})
    vs = check_graph(g, t)
    kinds = [(v.kind, v.op, v.role, v.data_type, v.operand) for v in vs]
    assert kinds[0] == ("input", "", "", "uint32", "x")
    assert ("dtype", "add", "a", "int64", "operation #0 cast") in kinds
    assert ("dtype", "add", "b", "int64", "constant #0") in kinds
    assert kinds[-1] == ("output", "", "", "int64", "y")
    assert not any(v.kind == "constant" for v in vs)  # int64 constants are allowed
    assert vs[0].line() == "hand lacks graph input uint32 (operand 'x'; it takes float32, " \
        "int32; rank 0..4)"
    t2 = _target(tmp_path, constant={"dataTypes": ["float32"]})
    assert any(v.kind == "constant" and v.operand == "constant #0"
               for v in check_graph(g, t2))


def test_tensor_byte_length(tmp_path: Path) -> None:
    b = _builder()
    x = b.input("x", [64], "float32")
    g = b.build({"y": b.relu(x)})
    vs = check_graph(g, _target(tmp_path, maxTensorByteLength=128))
    assert {v.kind for v in vs} == {"size"} and len(vs) == 4  # x, relu in/out, y
    assert "256 bytes > 128" in vs[0].line()


def test_format_violations_is_one_line(tmp_path: Path) -> None:
    b = _builder()
    x = b.input("x", [4], "int32")
    g = b.build({"y": b.relu(x)})
    line = format_violations(check_graph(g, _target(tmp_path)))
    assert "\n" not in line and line.endswith("and 1 more (1 distinct)")
    assert format_violations([]) == ""


def test_a_target_without_limits_accepts_everything() -> None:
    b = _builder()
    x = b.input("x", [4], "int64")
    g = b.build({"y": b.relu(x)})
    assert check_graph(g, Target("none", "", {}, ())) == []


@pytest.mark.parametrize("name, lacks", [("chromium-coreml", True), ("chromium-dml", False)])
def test_builtin_profiles_on_int64_gather_indices(name: str, lacks: bool) -> None:
    b = _builder()
    x = b.input("x", [2, 3], "float32")
    idx = b.constant(np.zeros((2, 3), np.int64), "int64")
    g = b.build({"y": b.gather_elements(x, idx)})
    lines = [v.line() for v in check_graph(g, load_target(name))]
    want = "chromium-coreml lacks gatherElements indices int64 (operand 'constant #0'"
    assert any(line.startswith(want) for line in lines) == lacks, lines


def _add_sigmoid(tmp_path: Path, sigmoid: bool) -> Path:
    import onnx
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Add", ["x", "x"], ["s"], name="Add_0")]
    if sigmoid:
        nodes.append(helper.make_node("Sigmoid", ["s"], ["y"], name="Sigmoid_1"))
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y" if sigmoid else "s", TensorProto.FLOAT, None)])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), path)
    return path


def test_validate_fails_on_what_the_target_lacks_and_convert_warns(tmp_path: Path) -> None:
    from converter.api import convert, validate

    limits = tmp_path / "addonly.json"
    limits.write_text(json.dumps({k: BASE[k] for k in ("input", "constant", "output", "add")}))
    ok = validate(_add_sigmoid(tmp_path, False), target=limits)
    assert ok.passed and ok.target == "addonly" and ok.target_violations == ()
    model = _add_sigmoid(tmp_path, True)
    bad = validate(model, target=limits)
    assert all(c.passed for c in bad.outputs)  # the numbers agree with onnxruntime ...
    assert not bad.passed  # ... but the target lacks sigmoid
    assert [v.line() for v in bad.target_violations] == [
        "addonly lacks operator sigmoid (operation #1 sigmoid)"]
    assert bad.to_dict()["verdict"] == "fail"
    assert bad.to_dict()["target"]["lacks"] == ["sigmoid (operator)"]
    assert "addonly lacks operator sigmoid" in bad.to_text()
    result = convert(model, target=limits)
    assert "addonly lacks operator sigmoid (operation #1 sigmoid)" in result.report.warnings
