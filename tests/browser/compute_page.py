"""A page that calls the generated module's `createModel(context).compute(feeds)` in a real
Chromium (tests/browser/test_compute.py, test_carried_state.py): the model created once,
`compute()` called on each feed in turn, each call's output kept."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from converter.io.export.exporter import export
from converter.validate.browser import PageServer, run_jobs

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
    const feedOf = (feed) => ({__INPUT__: new __ARRAY__(b64(feed))});
    const output = __OUTPUT__;
    const results = [];
    for (const feed of feeds) {
      const out = await model.compute(feedOf(feed));
      results.push(out[output].buffer);
    }
__AFTER__
    model.destroy();
    return {ok: true, results, __RETURNS__};
  } catch (e) {
    return {ok: false, error: String(e)};
  }
})();
</script>
"""


def run_compute_page(result: Any, folder: Path, browser: Any, feeds: Sequence[np.ndarray], *,
                     input_name: str, array: str, output: str, after: str = "",
                     returns: str = "") -> dict[str, Any]:
    """Exports `result` as JavaScript (`model.js`) into `folder` and runs a page that creates
    the model once and calls `compute({input_name: new <array>(feed)})` for each of `feeds`
    in turn, keeping output `output` of each call (`results`, `{"$base64"}` buffers); then
    runs the JavaScript statements `after` (the model still alive; indented four spaces;
    `feedOf(feed)` makes a feed's inputs, `output` is the output's name) and destroys the
    model. The page returns `{ok, results, <returns>}` (`returns`: more object entries,
    which may read `model`, `INPUTS`, `OUTPUTS` and what `after` declared). Returns run_jobs's answer. Input and output names
    are the test's own (JSON-quoted into the page)."""
    export(result, folder, format="js", stem="model")
    page = (PAGE.replace("__INPUT__", json.dumps(input_name)).replace("__ARRAY__", array)
            .replace("__OUTPUT__", json.dumps(output)).replace("__AFTER__", after)
            .replace("__RETURNS__", returns))
    (folder / "index.html").write_text(page, encoding="utf-8")
    (folder / "feeds.json").write_text(json.dumps(
        [base64.b64encode(x.tobytes()).decode("ascii") for x in feeds]))
    with PageServer(folder) as server:
        answer: dict[str, Any] = run_jobs(
            [{"url": server.url("/index.html"), "timeoutMs": 120_000}], browser)
    return answer
