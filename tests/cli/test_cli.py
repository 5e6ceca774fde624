"""`webnn-convert` end to end with click's CliRunner: every command on an ONNX model and a
TFLite model, exit codes and messages for bad input, validate pinpointing a broken mapping,
zoo on a tiny manifest."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from click.testing import CliRunner

from cli.main import cli, main
from cli.support_table import END, START, render_markdown
from tests.cli.models import ROOT, tiny_cnn, tiny_tflite, unsupported_onnx


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("models")
    onnx_path = tiny_cnn(d / "tiny.onnx")
    tfl = d / "tiny.tflite"
    tiny_tflite(tfl)
    custom = d / "custom.tflite"
    tiny_tflite(custom, custom=True)
    data = onnx_path.read_bytes()
    (d / "trunc.onnx").write_bytes(data[: len(data) // 3])
    tdata = tfl.read_bytes()
    (d / "trunc.tflite").write_bytes(tdata[: len(tdata) // 3])
    return {"onnx": onnx_path, "tflite": tfl, "custom": custom,
            "unsupported": unsupported_onnx(d / "unsupported.onnx"),
            "trunc_onnx": d / "trunc.onnx", "trunc_tflite": d / "trunc.tflite"}


def invoke(*args: object) -> object:
    return CliRunner().invoke(cli, [str(a) for a in args])


def no_traceback(result: object) -> None:
    assert "Traceback" not in result.output  # type: ignore[attr-defined]


# -- convert ------------------------------------------------------------------------------


def test_convert_onnx_writes_files_and_report(models: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = invoke("convert", models["onnx"], "-o", out, "--dim", "batch=1")
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.iterdir()) == [".webnn-converter.json",
                                                     "tiny.manifest.json", "tiny.webnn",
                                                     "tiny.weights"]  # the model's stem
    assert "Conv: native 2" in r.stdout and "image float32 [1, 3, 16, 16]" in r.stdout


def test_convert_json_and_all_formats(models: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = invoke("convert", models["onnx"], "-o", out, "--shape", "image=2,3,16,16",
               "--format", "js", "--stem", "cnn", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert {Path(p).name for p in data["files"]} >= {"cnn.js", "cnn.html", "cnn.webnn"}
    assert data["inputs"][0]["shape"] == [2, 3, 16, 16]
    assert data["report"]["ops"]["Conv"]["native"] == ["conv1", "conv2"]


def test_convert_tflite(models: dict[str, Path], tmp_path: Path) -> None:
    r = invoke("convert", models["tflite"], "-o", tmp_path / "t")
    assert r.exit_code == 0, r.output
    assert "(tflite)" in r.stdout and "CONV_2D: decomposed 1" in r.stdout
    assert (tmp_path / "t" / "tiny.webnn").is_file()


@pytest.mark.parametrize("key, words", [
    ("missing", ["nope.onnx", "does not exist"]),
    ("trunc_onnx", ["trunc.onnx", "not a valid ONNX model"]),
    ("trunc_tflite", ["trunc.tflite", "not a valid TFLite model"]),
    ("unsupported", ["Frobnicate", "'frob'", "no handler"]),
    ("custom", ["custom op 'Frobnicate'", "'act'"]),
])
def test_convert_errors_exit_2_and_write_nothing(models: dict[str, Path], tmp_path: Path,
                                                 key: str, words: list[str]) -> None:
    model = models.get(key, tmp_path / "nope.onnx")
    out = tmp_path / "out"
    r = invoke("convert", model, "-o", out)
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("error: ")
    for w in words:
        assert w in r.stderr
    no_traceback(r)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no temporary folder left behind either


def test_convert_error_json(models: dict[str, Path], tmp_path: Path) -> None:
    r = invoke("convert", models["unsupported"], "-o", tmp_path / "o", "--json")
    assert r.exit_code == 2
    err = json.loads(r.stdout)["error"]
    assert err["reason_code"] == "conversion_failed"
    assert err["errors"][0] == {**err["errors"][0], "node_name": "frob",
                                "op_type": "Frobnicate", "reason_code": "unsupported_op"}


@pytest.mark.parametrize("args, words", [
    (["--dim", "batch=zero"], ["--dim", "positive integer"]),
    (["--dim", "batch"], ["--dim", "NAME=VALUE"]),
    (["--dim", "batch=-3"], ["positive integer"]),
    (["--dim", "bacth=1"], ["bacth", "free dimensions", "batch"]),
    (["--shape", "image=1,3,x"], ["--shape"]),
    (["--signature", "serving"], ["TFLite"]),
])
def test_bad_options_exit_2(models: dict[str, Path], tmp_path: Path, args: list[str],
                            words: list[str]) -> None:
    r = invoke("convert", models["onnx"], "-o", tmp_path / "o", *args)
    assert r.exit_code == 2, r.output
    for w in words:
        assert w in r.output
    no_traceback(r)
    assert not (tmp_path / "o").exists()


def test_debug_shows_traceback(models: dict[str, Path], tmp_path: Path) -> None:
    r = invoke("convert", models["trunc_onnx"], "-o", tmp_path / "o", "--debug")
    assert r.exit_code == 2 and "Traceback" in r.stderr


def test_pin_input(tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")], "pin",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = tmp_path / "pin.onnx"
    onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                                      ir_version=8), path)
    r = invoke("convert", path, "-o", tmp_path / "o", "--pin", "shape=3,2", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["outputs"][0]["shape"] == [3, 2]
    r = invoke("validate", path, "--pin", "shape=[6,1]")
    assert r.exit_code == 0, r.output


# -- inspect ------------------------------------------------------------------------------


def test_inspect_onnx(models: dict[str, Path]) -> None:
    r = invoke("inspect", models["onnx"])
    assert r.exit_code == 0, r.output
    assert "image  float32  [batch, 3, 16, 16]" in r.stdout
    assert "free dimensions: batch" in r.stdout
    assert "Conv         2  supported" in r.stdout
    data = json.loads(invoke("inspect", models["onnx"], "--json").stdout)
    assert data["free_dims"] == ["batch"] and data["nodes"] == 9
    assert {o["op_type"]: o["count"] for o in data["ops"]}["Relu"] == 2


def test_inspect_unsupported_and_tflite(models: dict[str, Path]) -> None:
    r = invoke("inspect", models["unsupported"])
    assert r.exit_code == 2
    assert "com.example::Frobnicate" in r.stdout and "unsupported" in r.stdout
    assert "com.example::Frobnicate" in r.stderr
    r = invoke("inspect", models["tflite"], "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["format"] == "tflite"
    assert [o["op_type"] for o in data["ops"]] == ["CONV_2D", "TANH"]
    assert data["inputs"] == [{"name": "x", "dtype": "float32", "shape": [1, 8, 8, 3]}]
    r = invoke("inspect", models["trunc_tflite"])
    assert r.exit_code == 2 and "not a valid TFLite model" in r.stderr
    no_traceback(r)


# -- validate -----------------------------------------------------------------------------


def test_validate_onnx_and_tflite_pass(models: dict[str, Path]) -> None:
    r = invoke("validate", models["onnx"], "--dim", "batch=2")
    assert r.exit_code == 0, r.output
    assert "verdict: PASS" in r.stdout and "vs onnxruntime" in r.stdout
    r = invoke("validate", models["tflite"], "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["verdict"] == "pass" and data["format"] == "tflite"
    assert data["outputs"][0]["name"] == "act" and data["outputs"][0]["max_abs"] < 1e-5


def _break_relu(monkeypatch: pytest.MonkeyPatch, only: str | None = None) -> None:
    import op_mappings.onnx as registry

    registry.load_all()
    key = ("", "Relu")
    original = registry._REGISTRY[key]

    def sigmoid(ctx: object, node: object) -> list[object]:
        if only is not None and node.name != only:  # type: ignore[attr-defined]
            return original[-1].fn(ctx, node)
        return [ctx.builder.sigmoid(ctx.operand(node.inputs[0]))]  # type: ignore[attr-defined]

    monkeypatch.setitem(registry._REGISTRY, key,
                        [dataclasses.replace(h, fn=sigmoid) for h in original])


def test_validate_names_first_diverging_node(models: dict[str, Path],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    _break_relu(monkeypatch, only="relu2")
    r = invoke("validate", models["onnx"], "--dim", "batch=1")
    assert r.exit_code == 1, r.output
    assert "first diverging node: Relu 'relu2'" in r.stdout
    assert "output 'r2'" in r.stdout
    assert "probs" in r.stderr and "'relu2'" in r.stderr
    r = invoke("validate", models["onnx"], "--dim", "batch=1", "--json")
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    assert data["verdict"] == "fail"
    assert data["divergence"]["node"] == "relu2" and data["divergence"]["op_type"] == "Relu"


def test_validate_inputs_file(models: dict[str, Path], tmp_path: Path) -> None:
    image = np.random.default_rng(3).uniform(-5, 5, (1, 3, 16, 16)).astype(np.float32)
    np.savez(tmp_path / "in.npz", image=image)
    r = invoke("validate", models["onnx"], "--dim", "batch=1", "--inputs",
               tmp_path / "in.npz", "--json")
    assert r.exit_code == 0, r.output
    np.savez(tmp_path / "bad.npz", picture=image)
    r = invoke("validate", models["onnx"], "--dim", "batch=1", "--inputs",
               tmp_path / "bad.npz")
    assert r.exit_code == 2 and "picture" in r.stderr
    no_traceback(r)
    r = invoke("validate", models["onnx"], "--dim", "batch=1", "--inputs",
               tmp_path / "none.npz")
    assert r.exit_code == 2 and "none.npz" in r.stderr


def test_validate_unsupported_exit_2(models: dict[str, Path]) -> None:
    r = invoke("validate", models["custom"])
    assert r.exit_code == 2 and "Frobnicate" in r.stderr


# -- run ----------------------------------------------------------------------------------


def test_run_converted_graph(models: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "g"
    assert invoke("convert", models["onnx"], "-o", out, "--dim", "batch=2").exit_code == 0
    image = np.random.default_rng(0).uniform(0, 1, (2, 3, 16, 16)).astype(np.float32)
    np.savez(tmp_path / "in.npz", image=image)
    r = invoke("run", out / "tiny.webnn", "--inputs", tmp_path / "in.npz", "-o",
               tmp_path / "o.npz")
    assert r.exit_code == 0, r.output
    expected = ort.InferenceSession(str(models["onnx"]),
                                    providers=["CPUExecutionProvider"]).run(
                                        None, {"image": image})[0]
    with np.load(tmp_path / "o.npz") as got:
        np.testing.assert_allclose(got["probs"], expected, rtol=1e-5, atol=1e-6)
    r = invoke("run", out, "--inputs", tmp_path / "in.npz", "-o", tmp_path / "o2.npz",
               "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["outputs"]["probs"]["shape"] == [2, 10]


def test_run_bad_inputs(models: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "g"
    assert invoke("convert", models["tflite"], "-o", out).exit_code == 0
    np.savez(tmp_path / "wrong.npz", x=np.zeros((1, 4, 4, 3), np.float32))
    r = invoke("run", out, "--inputs", tmp_path / "wrong.npz", "-o", tmp_path / "o.npz")
    assert r.exit_code == 2 and "shape" in r.stderr
    np.savez(tmp_path / "names.npz", y=np.zeros((1, 8, 8, 3), np.float32))
    r = invoke("run", out, "--inputs", tmp_path / "names.npz", "-o", tmp_path / "o.npz")
    assert r.exit_code == 2 and "missing ['x']" in r.stderr
    r = invoke("run", tmp_path / "nothing.webnn", "--inputs", tmp_path / "names.npz", "-o",
               tmp_path / "o.npz")
    assert r.exit_code == 2 and "nothing.webnn" in r.stderr
    assert not (tmp_path / "o.npz").exists()
    no_traceback(r)


# -- ops ----------------------------------------------------------------------------------


def test_ops_table(tmp_path: Path) -> None:
    r = invoke("ops", "--source", "onnx")
    assert r.exit_code == 0
    assert "| Conv |" in r.stdout and "### ONNX" in r.stdout and "### TFLite" not in r.stdout
    data = json.loads(invoke("ops", "--format", "json").stdout)
    assert any(row["op_type"] == "CONV_2D" for row in data["tflite"])
    assert any(row["op_type"] == "Gemm" for row in data["onnx"])
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{START}\n{render_markdown()}\n{END}\nmore\n")
    r = invoke("ops", "--check", readme)
    assert r.exit_code == 0, r.output
    readme.write_text(f"{START}\n| Conv | 1 | | stale |\n{END}\n")
    r = invoke("ops", "--check", readme)
    assert r.exit_code == 1 and "differs" in r.stderr and "stale" in r.stdout
    readme.write_text("no markers\n")
    assert invoke("ops", "--check", readme).exit_code == 2


def test_docs_op_table_is_generated() -> None:
    """docs/operators.md holds the generated op table (the README links to it)."""
    table = ROOT / "docs" / "operators.md"
    assert START in table.read_text(encoding="utf-8")
    r = invoke("ops", "--check", table)
    assert r.exit_code == 0, r.output


# -- zoo ----------------------------------------------------------------------------------


def test_zoo_tiny_manifest(models: dict[str, Path], tmp_path: Path) -> None:
    manifest = tmp_path / "zoo.toml"
    manifest.write_text(f"""
[[model]]
name = "tiny_cnn"
path = "{models['onnx'].as_posix()}"
free_dims = {{ batch = 1 }}
licence = "Apache-2.0"

[[model]]
name = "tiny_tflite"
path = "{models['tflite'].as_posix()}"
tolerance = 1e-4

[[model]]
name = "<script>alert(1)</script>"
path = "{models['unsupported'].as_posix()}"

[[model]]
name = "not_here"
path = "missing.onnx"
""")
    report = tmp_path / "report"
    r = invoke("zoo", manifest, "--report", report, "--jobs", "1")
    assert r.exit_code == 1, r.output  # the unsupported model is an error
    assert "tiny_cnn" in r.stdout and "4 models: 2 pass, 0 fail, 1 error, 1 skipped" in r.stdout
    data = json.loads((report / "report.json").read_text())
    status = {m["name"]: m["status"] for m in data["models"]}
    assert status == {"tiny_cnn": "pass", "tiny_tflite": "pass",
                      "<script>alert(1)</script>": "error", "not_here": "skipped"}
    page = (report / "report.html").read_text()
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page
    assert "report.md" in r.stdout and (report / "report.md").is_file()
    r = invoke("zoo", manifest, "--filter", "tiny", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["summary"] == {"total": 2, "pass": 2, "fail": 0, "error": 0,
                                               "skipped": 0}
    r = invoke("zoo", manifest, "--filter", "zzz")
    assert r.exit_code == 2 and "no model matches" in r.stderr
    r = invoke("zoo", tmp_path / "none.toml")
    assert r.exit_code == 2 and "none.toml" in r.stderr


def test_main_entry_point(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for command in ("convert", "inspect", "validate", "run", "ops", "zoo"):
        assert command in out
