"""benchmarks/transformer_zoo.py in its tiny configuration (--quick: 3 rows of the
transformer zoo, 1 thread, 5 rounds, the conversion section on the tiny int4 Llama), so that
the script cannot rot: both sides run, their outputs agree within the rows' tolerances, and
the ratios, summary and conversion timings are written. The helpers are checked without
models too."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "transformer_zoo.py"
HAVE_TRANSFORMERS = all(importlib.util.find_spec(m) is not None
                        for m in ("transformers", "torch", "onnxruntime_genai"))


def _module() -> Any:
    sys.path.insert(0, str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("transformer_zoo", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["transformer_zoo"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_TRANSFORMERS, reason="the transformers extra is not installed "
                    "(pip install -e '.[transformers]')")
def test_quick_run_both_sides_agree(tmp_path: Path) -> None:
    out = tmp_path / "transformers.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--rows", "2", "--json",
                           str(out)], capture_output=True, text=True, timeout=900,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    assert data["errors"] == {}
    rows = data["rows"]
    assert [r["model"] for r in rows] == ["transformers_bert_torchscript",
                                          "transformers_bert_int4"]
    for r in rows:
        assert r["threads"] == 1 and r["ok"], r
        assert r["original_ms"] > 0 and r["ours_ms"] > 0
        assert r["ratio"] == pytest.approx(r["ours_ms"] / r["original_ms"], rel=1e-9)
        assert r["ratio_p25"] <= r["ratio_p75"]
        nodes = r["nodes"]
        assert nodes["original"] > 0 and nodes["lowered"] > 0
        assert nodes["original_optimized"] > 0 and nodes["lowered_optimized"] > 0
    [summary] = data["summary"]
    assert summary["models"] == 2 and summary["all_ok"]
    assert summary["geomean_ratio"] == pytest.approx(
        math.sqrt(rows[0]["ratio"] * rows[1]["ratio"]), rel=1e-9)
    assert summary["worst_ratio"] == max(r["ratio"] for r in rows)
    [conversion] = data["conversion"]
    assert conversion["model"] == "transformers_llama_genai_int4"
    assert conversion["convert_s"] > 0 and conversion["ort_session_s"] > 0
    assert conversion["backend_compile_s"] > 0 and conversion["operations"] > 0
    assert "geomean ratio" in proc.stdout and "convert/session" in proc.stdout


def test_helpers_without_models() -> None:
    tz = _module()
    ones = [np.ones((2, 3), np.float32)]
    assert tz.agree(ones, ones, 0.0, 0.0) == (True, 0.0)
    ok, err = tz.agree([ones[0] + 0.05], ones, 0.01, 0.01)  # 0.05 > 0.01 + 0.01 * 1
    assert not ok and err == pytest.approx(0.05)
    calls: list[str] = []
    orig, ours = tz.time_pairs(lambda: calls.append("o"), lambda: calls.append("b"),
                               warmup=1, repeat=4, pause=0.0)
    assert len(orig) == len(ours) == 4 and calls.count("o") == calls.count("b") == 5
    assert calls[2:] == ["o", "b", "b", "o", "o", "b", "b", "o"]  # the order alternates
    rows = [{"model": "a", "threads": 1, "ratio": 2.0, "ratio_p25": 1.0, "ratio_p75": 4.0,
             "ok": True},
            {"model": "b", "threads": 1, "ratio": 0.5, "ratio_p25": 0.25, "ratio_p75": 1.0,
             "ok": True}]
    [s] = tz.summarise(rows)
    assert s["geomean_ratio"] == pytest.approx(1.0) and s["worst_model"] == "a"
    assert s["geomean_p25"] == pytest.approx(0.5) and s["geomean_p75"] == pytest.approx(2.0)
    assert s["over_1_5"] == ["a"] and s["all_ok"]
