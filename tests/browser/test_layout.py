"""A layout-lowered CNN in the real browser: converter/zoo/models/make_tiny_cnn.py converted
for chromium-tflite (preferredInputLayout "nhwc": its convolutions and pools run in nhwc between
one transpose in and one before the flatten, converters.targets.rules_layout) builds and runs
in Chromium's WebNN and matches onnxruntime on the ONNX file."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from converter.api import convert
from converter.validate import validate

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]


def test_nhwc_lowered_cnn_in_the_browser(browser: Any, tmp_path: Path) -> None:
    script = ROOT / "converter" / "zoo" / "models" / "make_tiny_cnn.py"
    spec = importlib.util.spec_from_file_location("make_tiny_cnn", script)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = tmp_path / "tiny_cnn.onnx"
    module.make(model, seed=0)
    result = convert(model, free_dims={"batch": 1}, target="chromium-tflite")
    ops = [o.op for o in result.graph.operations]
    assert ops.count("transpose") == 1 and "conv2d" in ops  # in; the flatten reads NHWC
    assert all(o.options["inputLayout"] == "nhwc" for o in result.graph.operations
               if o.op == "conv2d")
    report = validate(model, free_dims={"batch": 1}, browser=True,
                      target="chromium-tflite", result=result)
    assert report.passed, report.to_text()
    assert report.browser is not None and report.browser.status == "pass", \
        report.browser.to_text() if report.browser else ""
