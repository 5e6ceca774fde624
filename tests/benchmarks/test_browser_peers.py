"""Real-browser smoke test of benchmarks/browser_peers.py (`pytest -m browser`): the tiny CNN
only, 3 steady-state rounds, one fresh page per runtime. Every runtime (our module with the
default and the chromium-tflite target, onnxruntime-web with its WebNN and its WASM provider)
must give outputs matching onnxruntime (Python), and the tables must have their columns. No
timing is asserted. Skips when the browser or the peers cannot be installed (unless
WEBNN_REQUIRE_BROWSER=1). The bars' arithmetic is checked without a browser."""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

import pytest

from tests.benchmarks.scripts import load_benchmark

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    return load_benchmark("browser_peers")


@pytest.mark.browser
def test_tiny_cnn_every_runtime_matches_onnxruntime() -> None:
    from converter.validate.browser import BrowserUnavailable

    bench = _load()
    try:
        report = bench.run_benchmark(["tiny"], cold=1, rounds=3, warmup=1)
    except BrowserUnavailable as exc:
        if os.environ.get("WEBNN_REQUIRE_BROWSER") == "1":
            pytest.fail(f"no browser (WEBNN_REQUIRE_BROWSER=1): {exc}")
        pytest.skip(f"no browser or peers: {exc}")
    rows = report["rows"]["tiny"]
    assert set(rows) == {"ours-default", "ours-chromium-tflite", "ort-webnn", "ort-wasm"}
    for runtime, row in rows.items():
        assert "error" not in row, (runtime, row)
        assert row["ok"] and row["max_abs"] <= 1e-3, (runtime, row)
        assert row["runs"] == 3 and row["first_ms"] > 0 and row["bytes_gzip"] > 0, row
    assert report["peers"] == {"onnxruntime-web": "1.30.0", "@litertjs/core": "2.5.3"}
    assert "Chrome" in str(report["browser"]) and report["page"]["threads"] >= 1
    text = bench.markdown(report)
    assert ("| model | ours | median / ORT WebNN | per round / ORT WebNN | median / ORT WASM | "
            "per round / ORT WASM | median / LiteRT.js | per round / LiteRT.js | "
            "first result / ORT WebNN | first result / ORT WASM | first result / LiteRT.js |"
            ) in text
    assert ("| model | runtime | first result (ms) | median (ms) | p90 (ms) | max abs error | "
            "within 1e-3 | shipped | shipped (gzip) | error |") in text
    assert "| tiny | chromium-tflite |" in text and "| ours | bar | worst | where | met |" in text


def test_bars_take_the_worst_ratio_and_the_geomean() -> None:
    """bars(): the largest ratio per bar and where; the geomean bar; n/a when unmeasured."""
    bench = _load()
    ratios = [{"model": "cnn", "ours": "ours-chromium-tflite", "peer": "ort-webnn",
               "median_ms": 0.5, "first_ms": 0.1},
              {"model": "lstm", "ours": "ours-chromium-tflite", "peer": "ort-webnn",
               "median_ms": 2.0, "first_ms": 0.2},
              {"model": "lstm", "ours": "ours-chromium-tflite", "peer": "ort-wasm",
               "median_ms": 3.0, "first_ms": 0.6}]
    report = {"rows": {"cnn": {}, "lstm": {}}, "ratios": ratios}
    got = {b["bar"]: b for b in bench.bars(report) if b["ours"] == "ours-chromium-tflite"}
    every = got["median <= 1.0x ORT WebNN, every model"]
    assert (every["worst"], every["worst_at"], every["pass"]) == (2.0, "lstm vs ORT WebNN",
                                                                  False)
    assert got["median geomean <= 0.9x ORT WebNN"]["worst"] == pytest.approx(1.0)
    assert got["LSTM/GRU median <= 1.0x ORT WASM"]["worst_at"] == "lstm vs ORT WASM"
    first = got["first result <= 0.5x onnxruntime-web / LiteRT.js, every model"]
    assert (first["worst"], first["pass"]) == (0.6, False)
    assert all(b["pass"] is None for b in bench.bars(report) if b["ours"] == "ours-default")


@pytest.mark.parametrize("kind, sizes", [("lstm_stack", {"hidden": 8, "layers": 3, "size": 5}),
                                         ("gru_bidi", {"hidden": 6, "size": 4})])
def test_sized_recurrent_models_match_onnxruntime(tmp_path: Path, kind: str,
                                                  sizes: dict[str, int]) -> None:
    """The benchmark's LSTM / GRU generators (make_recurrent's sized kinds, small here): the
    converted graph on the reference runtime matches onnxruntime on the generated file."""
    import numpy as np
    import onnxruntime as ort

    import converter
    from converter.zoo.models import make_recurrent

    path = tmp_path / f"{kind}.onnx"
    make_recurrent.make(path, kind, seed=1, **sizes)
    x = np.random.default_rng(0).normal(size=(7, 2, sizes["size"])).astype(np.float32)
    expected = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {"x": x})
    result = converter.convert(str(path), free_dims={"seq": 7, "batch": 2})
    got = result.run({"x": x}, backend="reference")
    values = list(got.values()) if isinstance(got, dict) else list(got)
    for ours, theirs in zip(values, expected, strict=True):
        np.testing.assert_allclose(np.asarray(ours).reshape(theirs.shape), theirs,
                                   atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="takes no size"):
        make_recurrent.make(path, "gru_hardsigmoid", hidden=4)
