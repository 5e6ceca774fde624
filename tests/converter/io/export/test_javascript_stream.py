"""The generated module streams its weights (issue 23, time to first result): with no weights
given, `createModel(context)` fetches the `.weights` file into one buffer of its known size
and buildGraph creates each constant as soon as its bytes have arrived, while the rest
downloads. Run in node against a fake `fetch` whose body delivers the file in small chunks,
one per macrotask (a network), and a recording fake `MLGraphBuilder`: every constant gets
exactly its bytes of the file (compared with the plan's bytes, written by the `.webnn`
writer), never before they arrived, and the first ones before the download ends; a short or
long file and an HTTP error reject createModel with one line naming the URL and the sizes;
given weights are used without a fetch; `loadWeights()` still resolves to the whole file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from converter.io.serialize.plan import constant_bytes, plan
from tests.converter.io.export.graphs import FAMILIES
from tests.converter.io.export.node_harness import _node, _write, needs_node

CHECK = r"""
import fs from "node:fs";
const [moduleUrl, weightsPath, mode, chunkSize] = process.argv.slice(2);
let file = new Uint8Array(fs.readFileSync(weightsPath));
if (mode === "short") file = file.subarray(0, file.length - 3);
if (mode === "long") file = new Uint8Array([...file, 1, 2, 3, 4, 5]);
let delivered = 0, fetches = 0;
const events = [];
globalThis.fetch = async (url) => {
  fetches++;
  let offset = 0;
  const body = new ReadableStream({async pull(controller) {
    await new Promise((resolve) => setTimeout(resolve));  // one chunk per macrotask
    if (offset >= file.length) return controller.close();
    const chunk = file.slice(offset, offset + Number(chunkSize));
    offset += chunk.length;
    delivered = offset;
    events.push({chunk: delivered});
    controller.enqueue(chunk);
  }});
  return {ok: mode !== "404", status: mode === "404" ? 404 : 200, body};
};
globalThis.MLGraphBuilder = function () {
  return new Proxy({}, {get(target, prop) {
    if (prop === "then") return undefined;
    if (prop === "build") return async () => ({destroy() {}});
    if (prop === "constant") return (desc, data) => {
      events.push({constant: Buffer.from(data.buffer, data.byteOffset, data.byteLength)
        .toString("hex"), delivered});
      return {};
    };
    return () => Array.from({length: 8}, () => ({}));
  }});
};
const context = {async createTensor(desc) { return {destroy() {}}; }};
const mod = await import(moduleUrl);
const out = {events};
try {
  if (mode === "given") await mod.createModel(context, new Uint8Array(fs.readFileSync(weightsPath)));
  else if (mode === "load") out.loaded = Buffer.from(await mod.loadWeights()).toString("hex");
  else await mod.createModel(context);
  out.ok = true;
} catch (e) {
  out.error = String(e);
}
out.fetches = fetches;
console.log(JSON.stringify(out));
"""


def _run(tmp_path: Path, mode: str, chunk: int = 64) -> tuple[dict[str, Any], list[bytes], int]:
    graph = FAMILIES["constants"]().graph
    p = plan(graph, "the graph")
    js, _, weights = _write(graph, tmp_path)
    (tmp_path / "check.mjs").write_text(CHECK)
    run = _node(tmp_path / "check.mjs", js.as_uri(), weights, mode, str(chunk))
    assert run.returncode == 0, run.stderr
    blobs = [constant_bytes(c.operand) for c in p.blob_constants]
    assert len(blobs) >= 2 and p.weights_size > 4 * chunk  # several chunks, several constants
    return json.loads(run.stdout), blobs, p.weights_size


@needs_node
def test_constants_are_created_as_their_bytes_arrive(tmp_path: Path) -> None:
    out, blobs, size = _run(tmp_path, "stream")
    assert out.get("ok"), out
    graph = FAMILIES["constants"]().graph
    entries = [c for c in plan(graph, "the graph").constants if c.kind == "weights"]
    made = [e for e in out["events"] if "constant" in e]
    streamed = [e for e in made if e["constant"] in {b.hex() for b in blobs}]
    assert [bytes.fromhex(e["constant"]) for e in streamed] == blobs
    for entry, event in zip(entries, streamed, strict=True):
        assert event["delivered"] >= entry.offset + entry.length  # never before its bytes
    assert streamed[0]["delivered"] < size  # the first ones while the rest downloads
    assert out["fetches"] == 1


@pytest.mark.parametrize(("mode", "got"), [("short", -3), ("long", 5), ("404", 0)])
@needs_node
def test_a_wrong_download_rejects_create_model(tmp_path: Path, mode: str, got: int) -> None:
    out, _, size = _run(tmp_path, mode)
    assert not out.get("ok")
    status = 404 if mode == "404" else 200
    assert out["error"] == (f"Error: weights: {(tmp_path / 'model.weights').as_uri()}: "
                            f"HTTP {status}, {size + got} of {size} bytes")


@needs_node
def test_given_weights_are_not_fetched_and_load_weights_gives_the_file(tmp_path: Path) -> None:
    out, blobs, _ = _run(tmp_path, "given")
    assert out.get("ok") and out["fetches"] == 0, out
    made = [bytes.fromhex(e["constant"]) for e in out["events"] if "constant" in e]
    assert [b for b in made if b in blobs] == blobs
    out, _, _ = _run(tmp_path, "load", chunk=7)
    assert out.get("ok") and out["fetches"] == 1, out
    assert bytes.fromhex(out["loaded"]) == (tmp_path / "model.weights").read_bytes()
