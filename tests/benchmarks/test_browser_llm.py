"""Real-browser smoke test of benchmarks/browser_llm.py (`pytest -m browser`): the
genai-builder int4 Llama, 4 greedy tokens, one fresh page per runtime and one interleaved
round. Our generator export's tokens must equal onnxruntime-web's (WebNN and WASM execution
providers) and onnxruntime's in Python, and the tables must have their columns. No timing is
asserted. Skips without the transformers extra (torch, transformers, onnxruntime-genai: they
generate the model) or when the browser or the peers cannot be installed (unless
WEBNN_REQUIRE_BROWSER=1)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest

from tests.benchmarks.scripts import load_benchmark

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
MISSING = [m for m in ("torch", "transformers", "onnxruntime_genai")
           if importlib.util.find_spec(m) is None]


def _load() -> ModuleType:
    return load_benchmark("browser_llm")


def test_llama_tokens_equal_onnxruntime_web_and_the_table_has_its_columns() -> None:
    if MISSING:
        pytest.skip(f"needs the transformers extra (missing: {', '.join(MISSING)})")
    from converter.validate.browser import BrowserUnavailable

    bench = _load()
    try:
        report = bench.run_benchmark(["llama"], tokens=4, cold=1, rounds=1, warmup=0)
    except BrowserUnavailable as exc:
        if os.environ.get("WEBNN_REQUIRE_BROWSER") == "1":
            pytest.fail(f"no browser (WEBNN_REQUIRE_BROWSER=1): {exc}")
        pytest.skip(f"no browser or peers: {exc}")
    row = report["rows"]["llama"]
    runtimes = row["runtimes"]
    assert set(runtimes) == {"ours", "ort-webnn", "ort-wasm"}
    for name, got in runtimes.items():
        assert "error" not in got, (name, got)
        assert got["tokens"] == got["cold_tokens"] == row["onnxruntime_tokens"], (name, got)
        assert len(got["tokens"]) == 4 and got["bytes_gzip"] > 0, (name, got)
    assert row["tokens_equal"] == {"ours": True, "ort-webnn": True, "ort-wasm": True}
    assert report["peers"]["onnxruntime-web"] == "1.30.0"
    assert "Chrome" in str(report["browser"]) and report["page"]["threads"] >= 1
    text = bench.markdown(report)
    assert ("| decoder | runtime | first token ms | decode tokens/s | shipped raw | "
            "shipped gzip | tokens = onnxruntime |") in text
    assert ("| decoder | peer | first token ours/peer | decode tokens/s ours/peer | "
            "per round | gzip bytes ours/peer |") in text
    assert "| llama | ours |" in text and "| llama | ort-webnn |" in text
