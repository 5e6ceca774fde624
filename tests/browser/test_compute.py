"""The generated module's `createModel(context).compute(feeds)` in a real Chromium: the tiny
CNN (converter/zoo/models/make_tiny_cnn.py, batch 2) exported as JavaScript, a page that
creates the model once and calls `compute()` twice with different images on the same
MLTensors, and both results against onnxruntime on the original ONNX model."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest

from converter import convert
from converter.io.export.exporter import export
from converter.validate.browser import PageServer, run_jobs
from converter.zoo.models.make_tiny_cnn import make

pytestmark = pytest.mark.browser

PAGE = """<!doctype html>
<meta charset="utf-8">
<script type="module">
import {createModel, INPUTS, OUTPUTS} from "./model.js";
const b64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0)).buffer;
globalThis.__webnnResult = (async () => {
  try {
    const feeds = await (await fetch("./feeds.json")).json();
    const context = await navigator.ml.createContext();
    const model = await createModel(context);
    const results = [];
    for (const feed of feeds) {
      const out = await model.compute({image: new Float32Array(b64(feed))});
      results.push(out.probs.buffer);
    }
    model.destroy();
    return {ok: true, results, inputs: model.inputs.map((d) => d.name),
            outputs: model.outputs.map((d) => d.name), io: [INPUTS, OUTPUTS]};
  } catch (e) {
    return {ok: false, error: String(e)};
  }
})();
</script>
"""


def test_create_model_computes_twice_on_the_same_tensors(browser: Any, tmp_path: Path
                                                         ) -> None:
    model = tmp_path / "tiny_cnn.onnx"
    make(model, seed=0)
    result = convert(str(model), free_dims={"batch": 2})
    folder = tmp_path / "site"
    export(result, folder, format="js", stem="model")
    (folder / "index.html").write_text(PAGE, encoding="utf-8")
    rng = np.random.default_rng(7)
    images = [rng.normal(0, 1, (2, 3, 16, 16)).astype(np.float32) for _ in range(2)]
    (folder / "feeds.json").write_text(json.dumps(
        [base64.b64encode(x.tobytes()).decode("ascii") for x in images]))
    with PageServer(folder) as server:
        answer = run_jobs([{"url": server.url("/index.html"), "timeoutMs": 120_000}], browser)
    assert str(answer["browser"]).startswith(("HeadlessChrome/", "Chrome/")), answer
    [page] = answer["results"]
    assert page["ok"], page
    assert page["inputs"] == ["image"] and page["outputs"] == ["probs"]
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    got = [np.frombuffer(base64.b64decode(r["$base64"]), np.float32).reshape(2, 10)
           for r in page["results"]]
    for image, probs in zip(images, got, strict=True):
        [want] = session.run(None, {"image": image})
        np.testing.assert_allclose(probs, want, rtol=1e-4, atol=1e-5)
    assert not np.allclose(got[0], got[1])  # the second call computed its own input
