"""The default target, `portable`: the intersection of the shipped Chromium profiles' limits
with every rule any of them needs; `spec` is the unrestricted graph. `convert` with no target
uses `portable` and the report says so; the command line never writes a graph outside its
target's limits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper

from cli.main import cli
from converter.api import convert, load_target
from converter.passes.targets import DEFAULT_TARGET, intersect_limits
from converter.passes.targets.check import check_graph

PROFILES = ("chromium-coreml", "chromium-dml", "chromium-tflite")


def _roles(limits: Any) -> dict[tuple[str, str], Any]:
    return {(op, role): entry for op, roles in limits.items() if isinstance(roles, dict)
            and op not in ("input", "constant", "output")
            for role, entry in roles.items()}


def test_portable_is_what_every_profile_supports() -> None:
    portable = load_target("portable")
    parts = [load_target(n) for n in PROFILES]
    assert DEFAULT_TARGET == "portable"
    limits = portable.limits_dict()
    for part in parts:
        lim = part.limits_dict()
        for key in ("input", "constant", "output"):
            assert set(limits[key]["dataTypes"]) <= set(lim[key]["dataTypes"])
            assert limits[key]["rankRange"]["max"] <= lim[key]["rankRange"]["max"]
        theirs = _roles(lim)
        for (op, role), entry in _roles(limits).items():
            assert set(entry["dataTypes"]) <= set(theirs[op, role]["dataTypes"]), (op, role)
            if "rankRange" in entry and "rankRange" in theirs[op, role]:
                assert entry["rankRange"]["min"] >= theirs[op, role]["rankRange"]["min"]
                assert entry["rankRange"]["max"] <= theirs[op, role]["rankRange"]["max"]
        assert set(part.rules) <= set(portable.rules)  # every deviation rule of each
        assert limits["maxTensorByteLength"] <= lim["maxTensorByteLength"]
    # Core ML takes no int64 and rank <= 5; the others differ in layout: none preferred
    assert limits["input"] == {"dataTypes": ["float32", "float16", "int32"],
                               "rankRange": {"min": 0, "max": 5}}
    # the profiles prefer different layouts: the CPU backend's, which every platform has
    assert limits["preferredInputLayout"] == "nhwc"
    # and within what the spec itself allows (its data types and ranks per operand role)
    from converter.core.webnn.limits import op_support_limits

    within = intersect_limits([limits, op_support_limits("nhwc")])
    assert within == limits


def test_intersect_limits_by_hand() -> None:
    a = {"preferredInputLayout": "nhwc", "maxTensorByteLength": 10,
         "add": {"a": {"dataTypes": ["float32", "int64"], "rankRange": {"min": 0, "max": 8}},
                 "output": {"dataTypes": ["float32", "int64"]}},
         "gelu": {"input": {"dataTypes": ["float32"]}}}
    b = {"preferredInputLayout": "nchw", "maxTensorByteLength": 7,
         "add": {"a": {"dataTypes": ["int64", "float16"], "rankRange": {"min": 1, "max": 5}},
                 "output": {"dataTypes": ["int64"]}}}
    assert intersect_limits([a, b]) == {
        "maxTensorByteLength": 7,
        "add": {"a": {"dataTypes": ["int64"], "rankRange": {"min": 1, "max": 5}},
                "output": {"dataTypes": ["int64"]}}}  # gelu: b lacks it


def _not_equal_model(path: Path) -> Path:
    """The attention-mask tail of a BERT export: a uint8 mask compared with 0 (ONNX Equal +
    Not: WebNN notEqual on uint8, which Chromium's CPU backend refuses to build)."""
    nodes = [helper.make_node("Cast", ["mask"], ["m8"], to=TensorProto.UINT8),
             helper.make_node("Equal", ["m8", "zero"], ["eq"]),
             helper.make_node("Not", ["eq"], ["keep"]),
             helper.make_node("Where", ["keep", "scores", "neg"], ["masked"])]
    graph = helper.make_graph(
        nodes, "mask",
        [helper.make_tensor_value_info("mask", TensorProto.INT64, [1, 8]),
         helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("masked", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor("zero", TensorProto.UINT8, [], [0]),
         helper.make_tensor("neg", TensorProto.FLOAT, [], [-10000.0])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), path)
    return path


def test_default_converts_the_uint8_not_equal_into_the_intersection(tmp_path: Path) -> None:
    model = _not_equal_model(tmp_path / "mask.onnx")
    spec = convert(model, target="spec")
    default = convert(model)
    assert spec.report.target == "spec" and default.report.target == "portable"
    assert check_graph(spec.graph, load_target("chromium-tflite"))  # the trap: uint8 notEqual
    assert not check_graph(default.graph, load_target("portable"))
    for name in PROFILES:  # inside every profile's limits
        assert not check_graph(default.graph, load_target(name)), name
    assert default.report.outside_target == []
    assert default.report.to_dict()["target"] == "portable"
    assert default.report.to_text().startswith("target: portable")
    mask = np.array([[1, 1, 0, 1, 0, 0, 1, 1]], np.int64)
    scores = np.linspace(-1, 1, 8, dtype=np.float32).reshape(1, 8)
    expected = np.where(mask != 0, scores, np.float32(-10000.0))
    out = default.run({"mask": mask, "scores": scores})["masked"]
    np.testing.assert_array_equal(out, expected)


def test_cli_names_the_target_used(tmp_path: Path) -> None:
    model = _not_equal_model(tmp_path / "mask.onnx")
    r = CliRunner().invoke(cli, ["convert", str(model), "-o", str(tmp_path / "out"), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["target"] == "portable" and data["report"]["target"] == "portable"
    r = CliRunner().invoke(cli, ["convert", str(model), "-o", str(tmp_path / "plain"),
                                 "--target", "spec"])
    assert r.exit_code == 0, r.output
    assert "target: spec" in r.stdout


def test_cli_refuses_a_graph_outside_its_target(tmp_path: Path) -> None:
    model = _not_equal_model(tmp_path / "mask.onnx")
    limits = tmp_path / "no_where.json"  # a WebNN implementation without `where`
    full = load_target("portable").limits_dict()
    del full["where"]
    limits.write_text(json.dumps(full), encoding="utf-8")
    out = tmp_path / "out"
    r = CliRunner().invoke(cli, ["convert", str(model), "-o", str(out), "--target",
                                 str(limits)])
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith(f"error: {model}: the converted graph uses what target no_where "
                           "lacks (1 kind(s)): no_where lacks operator where (operation #4 where)"), line
    assert "--target spec" in line
    assert not out.exists()  # nothing written
    r = CliRunner().invoke(cli, ["convert", str(model), "-o", str(out), "--target",
                                 str(limits), "--json"])
    error = json.loads(r.stdout)["error"]
    assert error["reason_code"] == "outside_target" and error["target"] == "no_where"


@pytest.mark.parametrize("name", ["spec", "portable"])
def test_target_names_load(name: str) -> None:
    t = load_target(name)
    assert t.name == name and t.description
    assert (t.rules == () and dict(t.limits) == {}) if name == "spec" else t.rules
