"""Smoke test of benchmarks/runtime_zoo.py (--quick: one small model, one thread,
onnxruntime backend vs onnxruntime on the original), so that the script cannot rot."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_quick_run_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "zoo.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "runtime_zoo.py"),
                           "--quick", "--json", str(out)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    assert data["errors"] == {}
    [row] = data["rows"]
    assert row["threads"] == 1 and row["original_ms"] > 0
    assert row["framework"] in ("onnxruntime", "litert")
    ort_row = row["backends"]["onnxruntime"]
    assert ort_row["ok"] and ort_row["ms"] > 0 and ort_row["ratio"] > 0
    [summary] = [s for s in data["summary"] if s["backend"] == "onnxruntime"]
    assert summary["models"] == 1 and summary["geomean_ratio"] == ort_row["ratio"]
    assert "geomean ratio" in proc.stdout


def test_native_torch_section_on_cpu() -> None:
    """The native-torch comparison (the GPU section's code, here on the CPU): both sides run,
    their outputs agree, and the timings are reported."""
    torch = pytest.importorskip("torch")
    from tests.benchmarks.scripts import load_benchmark

    module = load_benchmark("runtime_zoo")
    rows = module.torch_section("cpu", warmup=1, repeat=2)
    assert [r["model"] for r in rows] == ["torch-resnet-small", "torch-transformer-small"]
    for r in rows:
        assert r["ok"], r
        assert r["device"] == "cpu" and r["native_ms"] > 0 and r["backend_ms"] > 0
        assert r["ratio"] == pytest.approx(r["backend_ms"] / r["native_ms"], rel=1e-12)
    if not torch.cuda.is_available():
        assert module.torch_section("cuda", 1, 1) == []  # skipped cleanly without a GPU


def test_model_files_with_shapes(tmp_path: Path) -> None:
    """--model benchmarks a file named on the command line, --shape fixing a free dimension
    (the PP-OCR classifier's way in)."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3])])
    model = tmp_path / "relu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), model)
    out = tmp_path / "zoo.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "runtime_zoo.py"),
                           "--model", str(model), "--shape", "x=2,3", "--threads", "1",
                           "--warmup", "1", "--repeat", "3", "--backends", "onnxruntime",
                           "--json", str(out)], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    assert data["errors"] == {}
    [row] = data["rows"]
    assert row["model"] == "relu" and row["backends"]["onnxruntime"]["ok"]
