"""`converter.conversion.pipeline.conversion_passes`: what `convert` runs after the import,
in order: the precision's passes, then the target's (its rules, then its limits check)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from converter.api import InvalidModel
from converter.conversion.pipeline import conversion_passes, convert
from converter.passes.targets import load_target
from tests.converter.results import models


def test_precision_passes_then_target_passes() -> None:
    target = load_target("chromium-tflite")
    assert conversion_passes("float32", None) == ()
    assert [p.name for p in conversion_passes("float16", target)] == [
        "float16", "chromium-tflite rules", "chromium-tflite limits"]
    assert [p.name for p in conversion_passes("float32", target)] == [
        "chromium-tflite rules", "chromium-tflite limits"]
    with pytest.raises(InvalidModel, match="unknown precision 'int8'"):
        conversion_passes("int8", None)


def test_convert_notes_precision_before_target(tmp_path: Path) -> None:
    """float16 first: the target (a limits file with float32-only add) then checks the
    float16 graph."""
    models.plus_one(tmp_path)
    f32 = {"dataTypes": ["float32"]}
    limits = tmp_path / "adds.json"
    limits.write_text(json.dumps({"add": {"a": f32, "b": f32, "output": f32}}))
    result = convert(tmp_path / "plus_one.onnx", precision="float16", target=limits)
    sources = [w.split(" ")[0] for w in result.report.warnings]
    assert sources == ["float16:"] * 2 + ["adds"] * 4, result.report.warnings
    assert "adds lacks add a float16" in result.report.warnings[3]
