"""benchmarks/host_steps.py in its tiny configuration, so that the script cannot rot: the
synthetic detection tail of the host-step tests, one round."""

from __future__ import annotations

import json
from pathlib import Path

import onnx

from tests.benchmarks.scripts import load_benchmark
from tests.converter.conversion.host_models import make_detection


def test_one_round_on_the_detection_tail(tmp_path: Path) -> None:
    path = tmp_path / "detection.onnx"
    onnx.save(make_detection()[0], path)
    bench = load_benchmark("host_steps")
    assert bench.main([str(path), "--rounds", "1", "--warmup", "0",
                       "--json", str(tmp_path / "out.json")]) == 0
    (row,) = json.loads((tmp_path / "out.json").read_text())
    assert row["outputs_agree"] and row["host_steps"] == 18
    assert row["ours_ms"] > 0 and row["onnxruntime_ms"] > 0 and row["ratio"] > 0
