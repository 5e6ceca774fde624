"""Host steps in a real Chromium (issue 24, point 1): a detection-style ONNX model (sigmoid
scores -> ReduceMax/ArgMax -> Greater -> NonZero -> Gather -> TopK -> NonMaxSuppression ->
Gather; tests/converter/conversion/host_models.make_detection) converted with no flags and
exported as JavaScript; a page creates the model once and calls `computeTensors()` on
several inputs: the WebNN graph runs in the browser, the host steps in the module's plain
JavaScript; boxes, scores and labels (with their data-dependent shapes) against onnxruntime
on the original model."""

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
from tests.converter.conversion.host_models import make_detection

pytestmark = pytest.mark.browser

SEEDS = (0, 1, 2, 3)

PAGE = """<!doctype html>
<meta charset="utf-8">
<script type="module">
import {createModel, INPUTS} from "./model.js";
const b64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0)).buffer;
const text = (a) => btoa(Array.from(new Uint8Array(a.buffer, a.byteOffset, a.byteLength),
                                    (x) => String.fromCharCode(x)).join(""));
globalThis.__webnnResult = (async () => {
  try {
    const feeds = await (await fetch("./feeds.json")).json();
    const model = await createModel(await navigator.ml.createContext());
    const results = [];
    for (const feed of feeds) {
      const inputs = Object.fromEntries(INPUTS.map((d) => [d.name, new Float32Array(b64(feed[d.name]))]));
      const out = await model.computeTensors(inputs);
      results.push(Object.fromEntries(Object.entries(out).map(([name, t]) =>
        [name, {dataType: t.dataType, shape: t.shape, array: t.data.constructor.name, data: text(t.data)}])));
    }
    model.destroy();
    return {ok: true, results};
  } catch (e) {
    return {ok: false, error: String(e)};
  }
})();
</script>
"""


def test_detection_tail_runs_in_the_browser_like_onnxruntime(browser: Any,
                                                             tmp_path: Path) -> None:
    model, _ = make_detection()
    result = convert(model)
    assert result.host is not None
    folder = tmp_path / "site"
    export(result, folder, format="js", stem="model")
    feeds = [make_detection(seed)[1] for seed in SEEDS]
    (folder / "index.html").write_text(PAGE, encoding="utf-8")
    (folder / "feeds.json").write_text(json.dumps(
        [{n: base64.b64encode(a.tobytes()).decode("ascii") for n, a in f.items()}
         for f in feeds]))
    with PageServer(folder) as server:
        answer = run_jobs([{"url": server.url("/index.html"), "timeoutMs": 120_000}], browser)
    [page] = answer["results"]
    assert page["ok"], page
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    detections = 0
    for feed, got in zip(feeds, page["results"], strict=True):
        want = dict(zip(names, session.run(None, feed), strict=True))
        assert list(got) == names
        for name, expected in want.items():
            t = got[name]
            assert t["dataType"] == expected.dtype.name and t["shape"] == list(expected.shape)
            assert t["array"] == {"int64": "BigInt64Array"}.get(t["dataType"], "Float32Array")
            value = np.frombuffer(base64.b64decode(t["data"]), expected.dtype)
            if expected.dtype.kind == "f":  # the graph's sigmoid in the browser's float32
                np.testing.assert_allclose(value.reshape(expected.shape), expected,
                                           rtol=1e-5, atol=1e-6, err_msg=name)
            else:
                np.testing.assert_array_equal(value.reshape(expected.shape), expected, name)
        detections += len(want["det_labels"])
    assert detections > 0  # the inputs select boxes (not only empty results)
