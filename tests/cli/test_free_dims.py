"""Free dimensions and shape/control inputs through the real command line (click's
CliRunner on `cli.main:cli`): TFLite -1 dimensions convert and validate against LiteRT at
the stored shape, ONNX -1 / unnamed dimensions validate against onnxruntime with
`--dim INPUT:AXIS=V`, `--free-dim`, one-line errors that name flags (never Python keyword
arguments), and `inspect` suggesting the flags and pins (silero-vad's `--pin sr=16000`)."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest
from click.testing import CliRunner, Result

from cli.main import cli
from tests.cli.models import tiny_cnn
from tests.converter.frontends.onnx.test_free_dims import (
    _conv_model,
    _model,
    _shape_input_model,
    _silero,
    _vi,
)
from tests.converter.frontends.tflite.test_free_dims import mobilenet_like

KWARGS = ("free_dims", "input_dims", "input_shapes", "pin_inputs")


def invoke(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def one_line_error(r: Result) -> str:
    """The error line of a failed command: exit 2, one line on stderr, no traceback, no
    Python keyword arguments."""
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert not any(k in lines[0] for k in KWARGS), lines[0]
    return lines[0]


def _matrix_model() -> onnx.ModelProto:
    """x [?, 6] -> Relu: an unnamed first axis that is suggested as 1, not defaulted."""
    return _model([onnx.helper.make_node("Relu", ["x"], ["y"])], [_vi("x", [None, 6])],
                  [_vi("y", [None, 6])])


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("fd")
    (d / "mobilenet.tflite").write_bytes(mobilenet_like())
    onnx.save_model(_conv_model([-1, 3, 8, 8]), d / "paddle.onnx")
    onnx.save_model(_conv_model([None, 3, 8, 8]), d / "unnamed.onnx")
    onnx.save_model(_shape_input_model(), d / "shape_input.onnx")
    onnx.save_model(_matrix_model(), d / "matrix.onnx")
    return {"tflite": d / "mobilenet.tflite", "paddle": d / "paddle.onnx",
            "matrix": d / "matrix.onnx",
            "unnamed": d / "unnamed.onnx", "shape_input": d / "shape_input.onnx",
            "cnn": tiny_cnn(d / "cnn.onnx")}


# -- TFLite -1 dimensions -----------------------------------------------------------------


def test_tflite_minus_one_converts_and_validates_at_the_stored_shape(
        models: dict[str, Path], tmp_path: Path) -> None:
    r = invoke("convert", models["tflite"], "-o", tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert "x float32 [1, 8, 8, 3]" in r.stdout
    assert "warning: dynamic (-1) input dimension(s)" in r.stdout and "--dim x:0=N" in r.stdout
    r = invoke("validate", models["tflite"])  # against LiteRT, which runs [1, 8, 8, 3]
    assert r.exit_code == 0, r.output
    assert "y  float32  [1, 4]" in r.stdout and "verdict: PASS" in r.stdout


@pytest.mark.parametrize("flag", [["--dim", "x:0=2"], ["--shape", "x=2,8,8,3"]])
def test_tflite_flags_override_the_stored_size(models: dict[str, Path], flag: list[str]
                                               ) -> None:
    r = invoke("validate", models["tflite"], *flag, "--json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["verdict"] == "pass" and report["outputs"][0]["shape"] == [2, 4]


def test_tflite_inspect(models: dict[str, Path]) -> None:
    r = invoke("inspect", models["tflite"])
    assert r.exit_code == 0, r.output
    assert ("free dimensions: x[0] (x[0]=1 by default, the size LiteRT runs; other sizes: "
            "--dim x:0=N)") in r.stdout


def test_tflite_named_dim_error_names_flags(models: dict[str, Path], tmp_path: Path) -> None:
    line = one_line_error(invoke("convert", models["tflite"], "-o", tmp_path / "o",
                                 "--dim", "batch=1"))
    assert "no named free dimensions" in line and "--dim INPUT:AXIS=N" in line


# -- ONNX free dimensions -----------------------------------------------------------------


@pytest.mark.parametrize("model", ["paddle", "unnamed"])
def test_onnx_free_first_axis(models: dict[str, Path], tmp_path: Path, model: str) -> None:
    """The free first axis of an image input is a batch: converted at 1, the note naming
    the flag."""
    r = invoke("convert", models[model], "-o", tmp_path / "o")
    assert r.exit_code == 0, r.output
    assert "free batch dimension(s) converted at 1: x[0]" in r.stdout
    assert "--dim x:0=N (command line)" in r.stdout
    r = invoke("inspect", models[model])
    assert r.exit_code == 0, r.output
    assert ("free dimensions: x[0] (x[0]=1 by default, taken as a batch; other sizes: "
            "--dim x:0=N)") in r.stdout
    r = invoke("validate", models[model], "--dim", "x:0=2")  # against onnxruntime
    assert r.exit_code == 0, r.output
    assert "y  float32  [2, 4, 6, 6]" in r.stdout and "verdict: PASS" in r.stdout


def test_onnx_named_dims(models: dict[str, Path], tmp_path: Path) -> None:
    r = invoke("convert", models["cnn"], "-o", tmp_path / "o")
    assert r.exit_code == 0, r.output
    assert "free batch dimension(s) converted at 1: batch" in r.stdout
    assert "--dim batch=N (command line)" in r.stdout
    for flag in ("--dim", "--free-dim"):
        r = invoke("validate", models["cnn"], flag, "batch=2")
        assert r.exit_code == 0, r.output
    r = invoke("inspect", models["cnn"], "--json")
    info = json.loads(r.stdout)
    assert info["fixes"] == []
    assert [(f["cli"], f["python"]) for f in info["defaults"]] == [("--dim batch=1",
                                                                    'free_dims={"batch": 1}')]


@pytest.mark.parametrize("args, words", [
    (["--dim", "x:9=1"], ["axis 9", "out of range", "rank 4"]),
    (["--dim", "x:-5=1"], ["axis -5", "out of range"]),
    (["--dim", "nope:0=1"], ["'nope'", "not graph inputs"]),
    (["--dim", "x:0=0"], ["--dim", "positive integer"]),
    (["--dim", "x:0=two"], ["--dim", "positive integer"]),
    (["--dim", "x:0=1", "--dim", "x:0=2"], ["given twice"]),
    (["--dim", "x:1=4"], ["contradicts", "fixed dimension 3"]),
    (["--dim", "x:0=1", "--shape", "x=1,3,8,8"], ["both a whole shape and single"]),
    (["--free-dim", "x:0=1"], ["'x:0'", "not free dimensions"]),
    (["--free-dim", "batch"], ["--free-dim", "NAME=VALUE"]),
])
def test_onnx_bad_dims_are_one_line_errors(models: dict[str, Path], tmp_path: Path,
                                           args: list[str], words: list[str]) -> None:
    line = one_line_error(invoke("convert", models["paddle"], "-o", tmp_path / "o", *args))
    for w in words:
        assert w in line
    assert not (tmp_path / "o").exists()


def test_json_error_carries_both_renderings(models: dict[str, Path], tmp_path: Path) -> None:
    r = invoke("convert", models["matrix"], "-o", tmp_path / "o", "--json")
    assert r.exit_code == 2
    err = json.loads(r.stdout)["error"]
    assert err["reason_code"] == "unresolved_dimensions"
    assert err["hint"] == "fix them with --dim x:0=1"
    assert err["fixes"] == [{"option": "input_dims", "name": "x", "axis": 0, "value": 1,
                             "cli": "--dim x:0=1", "python": 'input_dims={"x": {0: 1}}'}]


# -- shape/control inputs -------------------------------------------------------------------


def test_pins_suggested_for_shape_inputs(models: dict[str, Path], tmp_path: Path) -> None:
    r = invoke("inspect", models["shape_input"])
    assert r.exit_code == 0, r.output
    assert ("shape/control inputs: shape (steers Reshape), n (steers Range), flag (steers If); "
            "pin with --pin shape=VALUE --pin n=VALUE --pin flag=VALUE") in r.stdout
    r = invoke("convert", models["shape_input"], "-o", tmp_path / "o")
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "--pin shape=VALUE" in r.stderr and "--pin n=VALUE --pin k=VALUE" in r.stderr
    assert not any(k in r.stderr for k in KWARGS)
    r = invoke("validate", models["shape_input"], "--pin", "shape=3,4", "--pin", "n=5",
               "--pin", "k=2", "--pin", "flag=true")  # against onnxruntime
    assert r.exit_code == 0, r.output
    assert "verdict: PASS" in r.stdout


def test_silero_vad_sr(tmp_path: Path) -> None:
    model = _silero()
    r = invoke("inspect", model)
    assert r.exit_code == 0, r.output
    assert "shape/control inputs: sr (steers If; compared with 16000); pin with --pin sr=16000" \
        in r.stdout
    line = one_line_error(invoke("convert", model, "-o", tmp_path / "o"))
    assert "--dim input:0=1 --dim input:1=N --dim state:1=N --pin sr=16000" in line
    dims = ["--dim", "input:0=1", "--dim", "input:1=512", "--dim", "state:1=1"]
    r = invoke("convert", model, "-o", tmp_path / "o", *dims)
    assert r.exit_code == 2 and "(hint: try --pin sr=16000)" in r.stderr, r.output
    r = invoke("validate", model, *dims, "--pin", "sr=16000")  # against onnxruntime
    assert r.exit_code == 0, r.output
    assert "verdict: PASS" in r.stdout
