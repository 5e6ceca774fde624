"""`webnn-convert convert` and `run` on a model with a data-dependent tail: the conversion
exits 0 and names the host steps; `run` on the export folder runs graph + host steps and
matches onnxruntime on the original model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from click.testing import CliRunner, Result

from cli.main import cli
from tests.converter.conversion.host_models import make_detection


def invoke(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_convert_and_run_a_model_with_host_steps(tmp_path: Path) -> None:
    model, inputs = make_detection()
    path = tmp_path / "detector.onnx"
    onnx.save(model, path)
    folder = tmp_path / "detector_webnn"
    r = invoke("convert", path, "-o", folder, "--format", "all")
    assert r.exit_code == 0, r.output
    assert "host steps: 18 node(s) run on the host after the WebNN graph (Gather x8, " in r.output
    assert (folder / "detector.host.json").is_file()
    np.savez(tmp_path / "inputs.npz", **inputs)
    r = invoke("run", folder, "--inputs", tmp_path / "inputs.npz", "-o", tmp_path / "out.npz")
    assert r.exit_code == 0, r.output
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    want = dict(zip([o.name for o in session.get_outputs()], session.run(None, inputs),
                    strict=True))
    with np.load(tmp_path / "out.npz") as got:
        assert sorted(got.files) == sorted(want)
        for name, value in want.items():
            assert got[name].dtype == value.dtype and got[name].shape == value.shape
            np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-6)
    r = invoke("run", folder, "--inputs", tmp_path / "inputs.npz")  # printed
    assert r.exit_code == 0 and "det_labels" in r.output and "mask" not in r.output, r.output


def test_run_names_missing_model_inputs(tmp_path: Path) -> None:
    model, inputs = make_detection()
    path = tmp_path / "detector.onnx"
    onnx.save(model, path)
    folder = tmp_path / "out"
    assert invoke("convert", path, "-o", folder).exit_code == 0
    np.savez(tmp_path / "inputs.npz", logits=inputs["logits"])  # boxes: host steps only
    r = invoke("run", folder, "--inputs", tmp_path / "inputs.npz")
    assert r.exit_code == 2 and "missing ['boxes']" in r.stderr, r.output
    assert r.stderr.count("\n") == 1
