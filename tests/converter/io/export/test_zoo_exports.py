"""Every zoo model (converter/zoo/models/zoo.toml + zoo_tflite.toml, read with converter.zoo) survives
each exporter:

- `.webnn` round trip: `converter.export(result, dir, format="webnn")`, `converter.load(dir)`,
  run on the reference backend: outputs bit-identical to the original graph's reference
  outputs (same names, order, dtypes and shapes);
- the same round trip through the JSON twin with `.safetensors` weights
  (`format="webnn-json", weights="safetensors"`);
- ONNX lowering: `converter.runtimes.onnxruntime.to_onnx.to_onnx(graph)` run in onnxruntime matches the
  reference backend within 1e-3 + 1e-3 * max|ref| per output (or the entry's tolerance when
  wider: a quantized model's integer kernels may round a step apart, amplified downstream);
- JavaScript: the exported ES module and the page's script pass `node --check` (skipped
  when node is not installed).

The generated transformer zoo (models/zoo_transformers.toml) takes the same round trips in the
slow job, where its export tools (the `transformers` extra) are installed.

Inputs are the manifest's (recipes, per-input ranges) completed by validation's generator;
`weights = "random"` entries are exported with their random weights. Entries marked `slow`
run in the slow job; entries whose package is missing are skipped.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import converter
from converter.validate import compile_graph, graph_feeds, make_inputs
from converter.zoo import ZooEntry, default_manifests, read_manifests
from converter.zoo.manifest import materialize
from converter.zoo.sources import convert_options, entry_inputs, load_model
from tests.converter.io.export.graphs import assert_same_outputs

ROOT = Path(__file__).resolve().parents[4]
ENTRIES = {e.name: e for e in read_manifests(default_manifests())}
TRANSFORMERS = {e.name: e for e in read_manifests([ROOT / "models" / "zoo_transformers.toml"],
                                                  generate=False)}
NODE = shutil.which("node")
TOL = 1e-3


def _params() -> list[Any]:
    return [pytest.param(name, id=name, marks=[pytest.mark.slow] if e.slow else [])
            for name, e in ENTRIES.items()] + [
        pytest.param(name, id=name, marks=[pytest.mark.slow]) for name in TRANSFORMERS]


@functools.cache
def _converted(name: str) -> tuple[Any, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(conversion result, graph feeds, reference-backend outputs) of a zoo entry, once per
    process."""
    entry: ZooEntry = ENTRIES[name] if name in ENTRIES else materialize(TRANSFORMERS[name])
    if entry.path is None:
        pytest.skip(entry.missing)
    result = converter.convert(load_model(entry), **convert_options(entry))
    inputs = make_inputs(result.source, seed=entry.seed,
                         overrides=entry_inputs(entry, result) or None)
    feeds = graph_feeds(result.graph, result.inputs, inputs)
    want = compile_graph(result.graph, "reference").run(feeds)
    return result, feeds, want


@pytest.mark.parametrize("name", _params())
def test_webnn_round_trip_is_bit_exact(name: str, tmp_path: Path) -> None:
    result, feeds, want = _converted(name)
    paths = converter.export(result, tmp_path / "out", format="webnn")
    assert sorted(p.name for p in paths) == ["model.manifest.json", "model.webnn",
                                             "model.weights"]
    loaded = converter.load(tmp_path / "out")
    assert list(loaded.inputs) == list(result.graph.inputs)
    got = compile_graph(loaded, "reference").run(feeds)
    assert_same_outputs(want, got)


@pytest.mark.parametrize("name", _params())
def test_json_twin_with_safetensors_round_trip_is_bit_exact(name: str, tmp_path: Path) -> None:
    result, feeds, want = _converted(name)
    paths = converter.export(result, tmp_path / "out", format="webnn-json",
                             weights="safetensors")
    assert sorted(p.name for p in paths) == ["model.safetensors", "model.webnn.json"]
    loaded = converter.load(tmp_path / "out")
    assert list(loaded.inputs) == list(result.graph.inputs)
    got = compile_graph(loaded, "reference").run(feeds)
    assert_same_outputs(want, got)


@pytest.mark.parametrize("name", _params())
def test_onnx_lowering_matches_reference(name: str) -> None:
    import onnxruntime as ort

    from converter.runtimes.onnxruntime.to_onnx import to_onnx

    result, feeds, want = _converted(name)
    model = to_onnx(result.graph)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    # as the onnxruntime backend does: DequantizeLinear(4-bit) + MatMul fused into MatMulNBits
    # would otherwise quantize the activations to int8 (about 1% error)
    options.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", "0")
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    got = dict(zip([o.name for o in session.get_outputs()],
                   session.run(None, {k: feeds[k] for k in names}), strict=True))
    assert list(got) == list(want)
    for key, ref in want.items():
        assert got[key].shape == ref.shape and got[key].dtype == ref.dtype, key
        ref64 = ref.astype(np.float64)
        err = float(np.max(np.abs(got[key].astype(np.float64) - ref64))) if ref.size else 0.0
        peak = float(np.max(np.abs(ref64))) if ref.size else 0.0
        entry = ENTRIES.get(name) or TRANSFORMERS[name]  # a quantized model: its own steps
        bound = max(TOL + TOL * peak, entry.atol + entry.rtol * peak)
        assert err <= bound, f"{name} output {key!r}: max error {err:.3g} > {bound:.3g}"


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("name", _params())
def test_javascript_passes_node_check(name: str, tmp_path: Path) -> None:
    result, _, _ = _converted(name)
    paths = {p.name: p for p in converter.export(result, tmp_path, format="js")}
    match = re.search(r'<script type="module">(.*?)</script>',
                      paths["model.html"].read_text(), re.S)
    assert match, "the page has no module script"
    page = tmp_path / "page.mjs"
    page.write_text(match.group(1))
    for script in (paths["model.js"], page):
        proc = subprocess.run([str(NODE), "--check", str(script)], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, f"{script.name}: {proc.stderr}"
