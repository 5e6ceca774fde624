"""Every model of the zoo manifests (models/zoo.toml, models/zoo_tflite.toml) converts and
passes `converter.zoo.run_entry` on the reference backend: exactly what `webnn-convert zoo`
validates. That is, per output, max|ours - original| <= atol + rtol * max|original| against
onnxruntime / LiteRT on the manifest's inputs (recipes "onnx-dummy" / "normal", per-input
ranges), with `weights = "random"` applied to both sides, and the same bound against the
stored reference output where the manifest names one. Entries marked `slow` run in the slow
job; entries whose package is not installed are skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from converter.zoo import ZooEntry, default_manifests, read_manifests, run_entry

ROOT = Path(__file__).resolve().parents[2]
ENTRIES = read_manifests(default_manifests(ROOT))


def _param(entry: ZooEntry) -> object:
    marks = [pytest.mark.slow] if entry.slow else []
    return pytest.param(entry, id=entry.name, marks=marks)


def test_manifest_entries_are_complete() -> None:
    assert {Path(e.manifest).name for e in ENTRIES} == {"zoo.toml", "zoo_tflite.toml"}
    for entry in ENTRIES:
        assert entry.source and entry.licence, entry.name
        assert entry.path is not None or "not found" in entry.missing, entry.name
        if entry.weights == "random":
            assert entry.path is None or entry.path.endswith(".onnx"), entry.name
    light = [e for e in ENTRIES if e.name.startswith("light_")]
    assert light and all(e.source.startswith("onnx-package:") for e in light)
    assert all(e.reference_output for e in light if e.weights == "as-is")
    assert {e.name + "_random" for e in light if e.weights == "as-is"} == {
        e.name for e in light if e.weights == "random"}


@pytest.mark.parametrize("entry", [_param(e) for e in ENTRIES])
def test_model_matches_original(entry: ZooEntry) -> None:
    if entry.path is None:
        pytest.skip(entry.missing)
    result = run_entry(entry)
    assert result.status == "pass", f"{entry.name}: {result.message} {result.outputs}"
    assert result.conversion.get("unsupported", 0) == 0
    stored = [o for o in result.outputs if o["name"].endswith(" (stored)")]
    assert len(stored) == (1 if entry.reference_output else 0), entry.name
