"""`--precision` on convert, validate, run and zoo through the real command line: a generated
CNN converted to float16 (weights file about half), validated against onnxruntime under the
float16 tolerances, run; a bad value is one error line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

from cli.main import cli
from tests.cli.models import tiny_cnn


def test_convert_validate_run_float16(tmp_path: Path) -> None:
    model = tiny_cnn(tmp_path / "cnn.onnx")
    runner = CliRunner()
    for precision in ("float32", "float16"):
        got = runner.invoke(cli, ["convert", str(model), "--dim", "batch=1", "-o",
                                  str(tmp_path / precision), "--precision", precision])
        assert got.exit_code == 0, got.output
    assert "warning: float16: float32 weights stored as float16" in got.output
    w32 = (tmp_path / "float32" / "cnn.weights").stat().st_size
    w16 = (tmp_path / "float16" / "cnn.weights").stat().st_size
    assert 0.45 * w32 < w16 < 0.52 * w32
    got = runner.invoke(cli, ["validate", str(model), "--dim", "batch=1",
                              "--precision", "float16"])
    assert got.exit_code == 0, got.output
    assert "tolerance atol 0.01 + rtol 0.01 * max|ref| (default for float16 compute)" in \
        got.output
    assert "verdict: PASS" in got.output
    x = np.random.default_rng(0).normal(size=(1, 3, 16, 16)).astype(np.float32)
    np.savez(tmp_path / "in.npz", image=x)
    (ref,) = ort.InferenceSession(str(model)).run(None, {"image": x})
    outs = {}
    for name, folder, extra in (("exported", "float16", []),
                                ("at run", "float32", ["--precision", "float16"])):
        got = runner.invoke(cli, ["run", str(tmp_path / folder / "cnn.webnn"), "--inputs",
                                  str(tmp_path / "in.npz"), "-o", str(tmp_path / "o.npz"),
                                  *extra])
        assert got.exit_code == 0, got.output
        outs[name] = np.load(tmp_path / "o.npz")["probs"]
        assert outs[name].dtype == np.float32
        assert np.max(np.abs(outs[name] - ref)) <= 1e-2 + 1e-2 * np.max(np.abs(ref))
    np.testing.assert_array_equal(outs["exported"], outs["at run"])


def test_json_names_the_precision_and_target(tmp_path: Path) -> None:
    # convert --json had neither, validate --json no precision
    model = tiny_cnn(tmp_path / "cnn.onnx")
    runner = CliRunner()
    flags = ["--dim", "batch=1", "--target", "chromium-coreml", "--precision", "float16",
             "--json"]
    got = runner.invoke(cli, ["convert", str(model), "-o", str(tmp_path / "o"), *flags])
    assert got.exit_code == 0, got.output
    doc = json.loads(got.stdout)
    assert doc["target"] == "chromium-coreml" and doc["precision"] == "float16"
    got = runner.invoke(cli, ["validate", str(model), *flags])
    assert got.exit_code == 0, got.output
    doc = json.loads(got.stdout)
    assert doc["target"]["name"] == "chromium-coreml" and doc["precision"] == "float16"
    got = runner.invoke(cli, ["convert", str(model), "-o", str(tmp_path / "p"), "--dim",
                              "batch=1", "--json"])
    doc = json.loads(got.stdout)
    assert doc["target"] == "portable" and doc["precision"] == "float32"


def test_bad_precision_is_one_error_line(tmp_path: Path) -> None:
    model = tiny_cnn(tmp_path / "cnn.onnx")
    for command in (["convert", str(model), "-o", str(tmp_path / "o")],
                    ["validate", str(model)], ["zoo", "--filter", "x"]):
        got = CliRunner().invoke(cli, [*command, "--precision", "float8"])
        assert got.exit_code == 2
        assert "Invalid value for '--precision': 'float8' is not one of 'float32', " \
               "'float16'" in got.output


def test_zoo_float16_widens_tolerances_and_names_overflows(tmp_path: Path) -> None:
    """zoo --precision float16: the CNN row (float32 tolerance 1e-4 in its entry) passes
    under the float16 defaults; a model whose values exceed 65504 fails, its message says
    float16 overflow and where."""
    tiny_cnn(tmp_path / "cnn.onnx")
    k = numpy_helper.from_array(np.full((4,), 300, np.float32), "k")
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "k"], ["m"], name="first"),
         helper.make_node("Mul", ["m", "k"], ["y"], name="second")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [k])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), tmp_path / "big.onnx")
    manifest = tmp_path / "zoo.toml"
    manifest.write_text('[[model]]\nname = "cnn"\npath = "cnn.onnx"\nfree_dims = { batch = 1 }\n'
                        'tolerance = 1e-4\n[[model]]\nname = "big"\npath = "big.onnx"\n'
                        'inputs = { x = { range = [1, 1] } }\n')
    got = CliRunner().invoke(cli, ["zoo", str(manifest), "--precision", "float16", "--json"])
    assert got.exit_code == 1, got.output
    rows = {r["name"]: r for r in json.loads(got.output)["models"]}
    assert rows["cnn"]["status"] == "pass" and rows["cnn"]["rtol"] == 1e-2
    assert rows["big"]["status"] == "fail"
    assert "float16 overflow first at Mul 'second': the original's value there peaks at " \
           "about 9e+04 (> 65504): numerically unsuited to float16" in rows["big"]["message"]
