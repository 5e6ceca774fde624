"""`webnn-convert validate --browser` of a model with host steps (docs/host-steps.md): the
detection tail of tests/converter/conversion/host_models.make_detection converts to a WebNN
graph plus host steps; the real-browser check exports the whole ConversionResult as
JavaScript, so Chromium runs the graph on its WebNN and the host steps in the module's plain
JavaScript (`computeTensors()`), and the model's outputs, with their data-dependent shapes,
are compared with onnxruntime on the original model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from click.testing import CliRunner

from cli.main import cli
from converter import convert
from converter.validate import validate
from converter.validate.browser import run_graphs
from converter.validate.core import check_in_browser
from tests.converter.conversion.host_models import make_detection

pytestmark = pytest.mark.browser

OUTPUTS = ["det_boxes", "det_scores", "det_labels"]


def _saved(tmp_path: Path) -> Path:
    model, _ = make_detection()
    path = tmp_path / "detection.onnx"
    onnx.save(model, path)
    return path


def test_cli_validate_browser_runs_the_host_steps(browser: Any, tmp_path: Path) -> None:
    path = _saved(tmp_path)
    text = CliRunner().invoke(cli, ["validate", str(path), "--browser"])
    assert text.exit_code == 0, text.output
    assert "real browser (" in text.output and "verdict: PASS" in text.output
    for name in OUTPUTS:
        assert f"  module {name}: " in text.output and f"  page {name}: " in text.output
    as_json = CliRunner().invoke(cli, ["validate", str(path), "--browser", "--json"])
    assert as_json.exit_code == 0, as_json.output
    report = json.loads(as_json.output)
    assert report["browser"]["status"] == "pass"
    assert [c["name"] for c in report["browser"]["outputs"]] == OUTPUTS
    assert [c["name"] for c in report["browser"]["page_outputs"]] == OUTPUTS


def test_validate_api_browser_check_passes(browser: Any, tmp_path: Path) -> None:
    report = validate(_saved(tmp_path), browser=True)
    assert report.passed, report.to_text()
    assert report.browser is not None and report.browser.status == "pass"
    assert [c.name for c in report.browser.outputs] == OUTPUTS
    want = {c.name: c.shape for c in report.outputs}  # the Python pipeline's shapes
    assert {c.name: c.shape for c in report.browser.outputs} == want


def test_browser_gives_the_model_outputs_with_their_shapes(browser: Any) -> None:
    """The module page's outputs are the model's (not the graph's boundary values), in their
    source data types and data-dependent shapes, equal to onnxruntime's; an input that
    selects no box gives empty outputs."""
    model, _ = make_detection()
    result = convert(model)
    assert result.host is not None
    feeds = [make_detection(seed)[1] for seed in (0, 1)]
    nothing = dict(feeds[0], logits=np.full_like(feeds[0]["logits"], -30.0))
    feeds.append(nothing)
    runs = run_graphs([(result, f) for f in feeds], setup=browser)
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    for feed, run in zip(feeds, runs, strict=True):
        assert not run.error and not run.page_error, (run.error, run.page_error)
        want = dict(zip(OUTPUTS, session.run(OUTPUTS, feed), strict=True))
        for got in (run.outputs, run.page_outputs):
            assert got is not None and list(got) == OUTPUTS
            for name, expected in want.items():
                assert got[name].dtype == expected.dtype, name
                assert got[name].shape == expected.shape, name
                np.testing.assert_allclose(got[name], expected, rtol=1e-5, atol=1e-6,
                                           err_msg=name)
    assert runs[-1].outputs is not None and runs[-1].outputs["det_boxes"].shape == (0, 4)
    assert runs[0].outputs is not None and len(runs[0].outputs["det_labels"]) > 0


def test_a_shape_mismatch_in_the_browser_is_one_failure_line(browser: Any) -> None:
    model, inputs = make_detection()
    result = convert(model)
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    reference = dict(zip(OUTPUTS, session.run(OUTPUTS, inputs), strict=True))
    assert reference["det_boxes"].shape == (10, 4)
    reference["det_boxes"] = np.zeros((11, 4), np.float32)
    check = check_in_browser(result, inputs, reference, page=False)
    assert check.status == "fail", check.to_text()
    lines = [line for line in check.to_text().splitlines() if line.startswith("  module det_")]
    assert len(lines) == 3 and "ok" in lines[1] and "ok" in lines[2], lines
    assert lines[0].endswith("FAIL (shape [10, 4] != reference [11, 4])"), lines
    assert "outside tolerance: det_boxes" in check.message
