"""`converter.validate` compares the whole pipeline (WebNN graph + host steps) of a model
with a data-dependent tail with onnxruntime on the original model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx

from converter.validate import validate
from tests.converter.conversion.host_models import make_detection, make_nonzero_gather


def test_validate_compares_the_whole_pipeline(tmp_path: Path) -> None:
    model, _ = make_detection()
    path = tmp_path / "detection.onnx"
    onnx.save(model, path)
    report = validate(path)
    assert report.passed, report.to_text()
    assert [c.name for c in report.outputs] == ["det_boxes", "det_scores", "det_labels"]
    assert any(n.startswith("host steps: ") for n in report.notes)


def test_a_data_dependent_shape_mismatch_is_one_failure_line(tmp_path: Path) -> None:
    model, inputs = make_nonzero_gather()
    path = tmp_path / "nonzero.onnx"
    onnx.save(model, path)
    report = validate(path, inputs=inputs, expected={"picked": np.zeros(3, np.float32)})
    assert not report.passed
    line = next(line for line in report.to_text().splitlines() if "(stored)" in line)
    assert "FAIL" in line and "shape" in line and "!= reference [3]" in line


def test_inspect_names_the_host_steps(tmp_path: Path) -> None:
    from converter.validate.inspect import inspect_model

    model, _ = make_detection()
    path = tmp_path / "detection.onnx"
    onnx.save(model, path)
    info = inspect_model(path)
    status = {o.op_type: o.status for o in info.ops}
    assert status["NonZero"] == "host" and status["NonMaxSuppression"] == "host"
    assert not info.unsupported
