"""The default target in the real browser: the attention-mask tail of a BERT export (uint8
mask compared with 0: WebNN notEqual on uint8) converted with no target builds in headless
Chromium 153 (CPU, LiteRT) and matches onnxruntime; the unrestricted graph (`--target spec`)
is the one the browser refuses ("Unsupported data type uint8")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter.api import convert, validate
from converter.validate.core import check_in_browser
from tests.converter.passes.targets.test_portable import _not_equal_model

pytestmark = pytest.mark.browser


def test_default_target_builds_where_the_spec_graph_does_not(browser: Any,
                                                             tmp_path: Path) -> None:
    model = _not_equal_model(tmp_path / "mask.onnx")
    mask = np.array([[1, 1, 0, 1, 0, 0, 1, 1]], np.int64)
    report = validate(model, backend="onnxruntime", browser=True, inputs={"mask": mask})
    assert report.passed, report.to_text()
    assert report.target == "portable"
    assert report.browser is not None and report.browser.status == "pass", \
        report.browser.to_text() if report.browser else ""
    spec = convert(model, target="spec")
    scores = np.zeros((1, 8), np.float32)
    expected = {"masked": np.where(mask != 0, scores, np.float32(-10000.0))}
    checked = check_in_browser(spec, {"mask": mask, "scores": scores}, expected, page=False)
    assert checked.status != "pass"
    assert "uint8" in checked.to_text()
