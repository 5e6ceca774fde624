"""Carried state in a real Chromium (issue 24, point 3): the micro-wakeword-style streaming
TFLite model (tests/converter/frontends/tflite/streaming.py: a resource-variable ring buffer)
exported as JavaScript; a page creates the model once, calls `compute()` on 12 frames in
turn (the state input left out, so the module carries it), then `resetState()` and the first
frame again; every result against LiteRT's persistent interpreter on the original model."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter import convert
from converter.io.export.exporter import export
from converter.validate.browser import PageServer, run_jobs
from tests.converter.frontends.tflite.streaming import (
    frames,
    int8_frames,
    litert_sequence,
    quantized_streaming_model,
    streaming_model,
)

pytestmark = pytest.mark.browser

CALLS = 12

PAGE = """<!doctype html>
<meta charset="utf-8">
<script type="module">
import {createModel} from "./model.js";
const b64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0)).buffer;
globalThis.__webnnResult = (async () => {
  try {
    const feeds = await (await fetch("./feeds.json")).json();
    const context = await navigator.ml.createContext();
    const model = await createModel(context);
    const results = [];
    for (const feed of feeds) {
      const out = await model.compute({features: new FEATURES(b64(feed))});
      results.push(out[OUTPUT].buffer);
    }
    model.resetState();
    const again = (await model.compute({features: new FEATURES(b64(feeds[0]))}))[OUTPUT].buffer;
    model.destroy();
    return {ok: true, results, again};
  } catch (e) {
    return {ok: false, error: String(e)};
  }
})();
</script>
"""


@pytest.mark.parametrize("kind", ["float32", "int8"])
def test_compute_carries_state_like_litert(browser: Any, tmp_path: Path, kind: str) -> None:
    """float32: within 1e-4 of LiteRT; int8 (micro-wakeword's form): equal."""
    pytest.importorskip("ai_edge_litert.interpreter")
    model = streaming_model() if kind == "float32" else quantized_streaming_model()
    inputs = frames(CALLS) if kind == "float32" else int8_frames(CALLS)
    output = "prob" if kind == "float32" else "score"
    ref = litert_sequence(model, inputs)
    result = convert(model)
    folder = tmp_path / "site"
    export(result, folder, format="js", stem="model")
    page_text = (PAGE.replace("FEATURES", "Float32Array" if kind == "float32" else "Int8Array")
                 .replace("OUTPUT", json.dumps(output)))
    (folder / "index.html").write_text(page_text, encoding="utf-8")
    (folder / "feeds.json").write_text(json.dumps(
        [base64.b64encode(x.tobytes()).decode("ascii") for x in inputs]))
    with PageServer(folder) as server:
        answer = run_jobs([{"url": server.url("/index.html"), "timeoutMs": 120_000}], browser)
    [page] = answer["results"]
    assert page["ok"], page
    dtype = np.float32 if kind == "float32" else np.int8
    got = [np.frombuffer(base64.b64decode(r["$base64"]), dtype).reshape(1, 2)
           for r in page["results"]]
    diff = max(float(np.max(np.abs(a.astype(np.float64) - b))) for a, b in
               zip(got, ref, strict=True))
    assert diff <= (1e-4 if kind == "float32" else 0), diff
    again = np.frombuffer(base64.b64decode(page["again"]["$base64"]), dtype)
    np.testing.assert_allclose(again.reshape(1, 2), ref[0], atol=1e-4)
