"""validate()'s default tolerance follows the converted graph's compute type (float32,
float16, 8-bit and 4-bit quantized paths: converter/validate/core.py TOLERANCES), given
tolerances win, and the report (text, JSON, the CLI) prints the values used and their
basis."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper, save_model

from cli.main import cli
from converter import convert
from converter.validate import validate
from converter.validate.core import TOLERANCES, compute_type, default_tolerance

RNG = np.random.default_rng(3)


def _save(path: Path, nodes: list, inputs: list, outputs: list, inits: list,
          opset: int = 17) -> Path:
    graph = helper.make_graph(nodes, path.stem, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=10 if opset >= 21 else 8)
    save_model(model, path)
    return path


def _float32(path: Path) -> Path:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    return _save(path, [helper.make_node("Relu", ["x"], ["y"])], [x], [y], [])


def _float16(path: Path) -> Path:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT16, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT16, [2, 3])
    c = numpy_helper.from_array(RNG.standard_normal((2, 3)).astype(np.float16), "c")
    return _save(path, [helper.make_node("Mul", ["x", "c"], ["y"])], [x], [y], [c])


def _int8(path: Path) -> Path:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
    y = helper.make_tensor_value_info("y", TensorProto.INT32, [4, 2])
    w = numpy_helper.from_array(RNG.integers(-128, 128, (8, 2)).astype(np.int8), "w")
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"]),
             helper.make_node("MatMulInteger", ["q", "w", "z"], ["y"])]
    return _save(path, nodes, [x], [y], [w])


def _int4(path: Path) -> Path:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    w = helper.make_tensor("w", TensorProto.INT4, [8, 4],
                           RNG.integers(-8, 8, 32).astype(np.int8).tolist())
    s = numpy_helper.from_array(np.full((4,), 0.1, np.float32), "s")
    nodes = [helper.make_node("DequantizeLinear", ["w", "s"], ["wf"], axis=1),
             helper.make_node("MatMul", ["x", "wf"], ["y"])]
    return _save(path, nodes, [x], [y], [w, s], opset=21)


MODELS = {"float32": _float32, "float16": _float16, "int8": _int8, "int4": _int4}


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_default_tolerance_follows_the_compute_type(kind: str, tmp_path: Path) -> None:
    path = MODELS[kind](tmp_path / f"{kind}.onnx")
    assert compute_type(convert(str(path)).graph) == kind
    report = validate(str(path))
    assert (report.rtol, report.atol) == TOLERANCES[kind]
    assert report.tolerance_basis == f"default for {kind} compute"
    assert report.passed, report.to_text()
    rtol, atol = TOLERANCES[kind]
    assert (f"tolerance atol {atol:g} + rtol {rtol:g} * max|ref| (default for {kind} "
            "compute)") in report.to_text()
    assert report.to_dict()["tolerance_basis"] == report.tolerance_basis


def test_quantized_and_float16_are_looser_than_float32() -> None:
    base = TOLERANCES["float32"]
    for kind in ("float16", "int8", "int4"):
        assert all(t > b for t, b in zip(TOLERANCES[kind], base, strict=True)), kind


def test_given_tolerances_win(tmp_path: Path) -> None:
    path = _float16(tmp_path / "half.onnx")
    report = validate(str(path), rtol=0.5, atol=0.25)
    assert (report.rtol, report.atol, report.tolerance_basis) == (0.5, 0.25, "given")
    graph = convert(str(path)).graph
    assert default_tolerance(graph, rtol=0.5) == (0.5, 1e-2,
                                                   "default for float16 compute, rtol given")
    assert default_tolerance(graph, atol=0.0) == (1e-2, 0.0,
                                                   "default for float16 compute, atol given")


def test_cli_prints_the_tolerance_used(tmp_path: Path) -> None:
    path = _int8(tmp_path / "q.onnx")
    run = CliRunner().invoke(cli, ["validate", str(path)])
    assert run.exit_code == 0, run.output
    assert "tolerance atol 0.02 + rtol 0.02 * max|ref| (default for int8 compute)" in run.stdout
    run = CliRunner().invoke(cli, ["validate", str(path), "--rtol", "1e-4", "--atol", "0",
                                   "--json"])
    data = json.loads(run.stdout)
    assert (data["rtol"], data["atol"], data["tolerance_basis"]) == (1e-4, 0.0, "given")
    run = CliRunner().invoke(cli, ["validate", str(path), "--atol", "-1"])
    assert run.exit_code == 2 and "--atol must be a finite number" in run.stderr
