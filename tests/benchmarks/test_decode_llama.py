"""Smoke test of benchmarks/decode_llama.py (--quick: 1 thread, 16 tokens, 3 rounds; the
onnxruntime backend vs onnxruntime, onnxruntime over the fixed buffer and onnxruntime-genai),
so that the script cannot rot: every side generates onnxruntime's tokens and is timed.

Marked slow (it runs in CI's slow step, where the transformers extra is installed: the
model builder's folder is generated on first use, ~15 s, then cached) and skipped without
the extra."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MISSING = [m for m in ("torch", "transformers", "onnxruntime_genai")
           if importlib.util.find_spec(m) is None]


@pytest.mark.slow
@pytest.mark.skipif(bool(MISSING), reason=f"needs the transformers extra (missing: {MISSING})")
def test_quick_run_agrees_and_reports_ratios(tmp_path: Path) -> None:
    out = tmp_path / "decode.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "decode_llama.py"),
                           "--quick", "--json", str(out)], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    rows = {r["contender"]: r for r in data["rows"]}
    assert set(rows) == {"onnxruntime", "onnxruntime-fixed", "genai", "ours-onnxruntime"}
    for row in rows.values():
        assert row["agree"], row  # the same 16 tokens as onnxruntime
        assert row["threads"] == 1 and row["tokens"] == 16
        assert row["decode_tokens_per_s"] > 0 and row["prefill_ms"] > 0
        assert row["ratio"] == pytest.approx(
            row["decode_tokens_per_s"] / rows["onnxruntime"]["decode_tokens_per_s"], rel=1e-2)
    assert rows["onnxruntime"]["ratio"] == 1.0
    ours = rows["ours-onnxruntime"]
    assert ours["cache"] == "fixed" and ours["graphs"] == 2  # one prompt + one decode graph
    assert "ours-onnxruntime" in proc.stdout and "ratio" in proc.stdout
