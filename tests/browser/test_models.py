"""The tiny CNN and the attention block (models/), converted, exported as JavaScript and run in
a real Chromium through the module and through the generated page: `validate(...,
browser=True)` matches onnxruntime within validate's tolerance; the CLI says the same."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from cli.main import cli
from converter.validate import validate

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]


def _make(script: str, path: Path) -> Path:
    spec = importlib.util.spec_from_file_location(script, ROOT / "converter" / "zoo" / "models" / f"{script}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.make(path, seed=0)
    return path


def _check(report: Any) -> None:
    b = report.browser
    assert b is not None
    assert b.status == "pass", b.to_text()
    assert [c.name for c in b.outputs] == [c.name for c in report.outputs]
    assert [c.name for c in b.page_outputs] == [c.name for c in report.outputs]
    assert all(c.passed for c in (*b.outputs, *b.page_outputs))
    assert b.browser.startswith(("HeadlessChrome/", "Chrome/"))


def test_tiny_cnn_in_the_browser(browser: Any, tmp_path: Path) -> None:
    model = _make("make_tiny_cnn", tmp_path / "tiny_cnn.onnx")
    report = validate(model, free_dims={"batch": 2}, backend="onnxruntime", browser=True)
    assert report.passed, report.to_text()
    _check(report)
    assert report.to_dict()["browser"]["status"] == "pass"
    assert "real browser (" in report.to_text()


def test_attention_block_in_the_browser(browser: Any, tmp_path: Path) -> None:
    model = _make("make_attention", tmp_path / "attention.onnx")
    mask = np.ones((1, 12), np.int64)
    mask[0, 8:] = 0  # padded positions: the -10000 bias path
    report = validate(model, free_dims={"seq": 12}, backend="onnxruntime", browser=True,
                      inputs={"attention_mask": mask})
    assert report.passed, report.to_text()
    _check(report)


def test_validate_cli_with_browser(browser: Any, tmp_path: Path) -> None:
    model = _make("make_tiny_cnn", tmp_path / "tiny_cnn.onnx")
    r = CliRunner().invoke(cli, ["validate", str(model), "--dim", "batch=1", "--browser",
                                 "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["verdict"] == "pass" and data["browser"]["status"] == "pass"
    assert [o["name"] for o in data["browser"]["page_outputs"]] == ["probs"]
