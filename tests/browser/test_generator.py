"""The JavaScript generation runtime (`webnn-convert convert DECODER --format js`:
`converter.validate.decoder_graphs.generator_graphs` + `converter.io.export.generator_js`) in
the real headless Chromium, against onnxruntime and the Python generator.

The transformer zoo's onnxruntime-genai builder decoders (int4 MatMulNBits,
GroupQueryAttention, a KV cache written in place: Llama, Qwen2, Phi-3) and its GPT-2 with past
(TorchScript export, Concat(past, new) and positions from the past length: the "sliding"
window with a position_ids input added by rewrite) (models/make_transformers.py, cached) are
exported with a KV buffer of 64 rows (the models' context length) and a prefill chunk of 2
tokens (the prompts of 4-6 tokens run 2-3 chunks, an odd one a decode step more). Then:

- the export's page, as a user drives it (types the ids, presses Generate): 32 greedy tokens,
  streamed one by one, equal onnxruntime's on the original model (OnnxRuntimeDecoder) token
  for token. onnxruntime's MatMulNBits quantizes activations to int8 where the converted
  graph computes in float, so exact equality only means something where no step is a near
  tie: each prompt is one whose 32 steps all have a top-2 margin of more than twice the
  largest logit difference between onnxruntime and our graphs (Decoder on the onnxruntime
  backend), which the test asserts;
- `createGenerator` as an application calls it: seeded top-k/top-p sampling gives the tokens
  the Python generator (`Decoder.generate(sampling=...)`, the same definition) gives on the
  same graphs; greedy again after `reset()` gives the same tokens; `eosTokenId` stops at the
  first occurrence; `{prefill: false}` (the prompt a token at a time) gives the same greedy
  tokens; a prompt longer than the buffer is a RangeError.

Skipped (with the reason) without the transformers extra (torch, transformers,
onnxruntime-genai), which generating the models needs; CI's browser step installs it.
"""

from __future__ import annotations

import importlib.util
import json
import urllib.parse
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter.io.export.exporter import export
from converter.validate.browser_setup import run_jobs
from converter.validate.decoder_graphs import generator_graphs
from converter.validate.generate import Decoder, OnnxRuntimeDecoder
from converter.validate.page_server import PageServer
from converter.validate.sampling import Sampling

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "models" / "make_transformers.py"
PROMPTS = {"llama": [48, 270, 502, 21], "qwen2": [108, 38, 278, 503, 367, 254],
           "phi3": [127, 499, 274, 440, 76], "gpt2": [414, 473, 246, 329, 5]}
"""Prompts whose 32 greedy steps all have a top-2 margin above twice the logit difference
(found by trying random prompts; the differences are <= 5e-3) and whose continuations are
not one token repeated (20-31 distinct tokens)."""
VARIANTS = {"llama": "genai_int4", "qwen2": "genai_int4", "phi3": "genai_int4",
            "gpt2": "with_past"}
KV = {"llama": (2, 16), "qwen2": (2, 16), "phi3": (2, 16), "gpt2": None}
"""The genai models' past inputs name their head count and size; GPT-2's declare them."""
MAX_LENGTH, CHUNK, NEW = 64, 2, 32
SAMPLING = Sampling(top_k=8, top_p=0.95, temperature=1.0, seed=11)
MISSING = [m for m in ("torch", "transformers", "onnxruntime_genai")
           if importlib.util.find_spec(m) is None]

CHECK_PAGE = b"""<!doctype html><meta charset="utf-8"><title>generator check</title>
<script type="module">
const params = new URLSearchParams(location.search);
globalThis.__webnnResult = (async () => {
  try {
    const mod = await import(new URL(params.get("module"), location.href));
    const prompt = JSON.parse(params.get("prompt"));
    const context = await navigator.ml.createContext();
    const generator = await mod.createGenerator(context);
    const streamed = [];
    const sampled = await generator.generate(prompt, {maxNewTokens: 32,
      sampling: JSON.parse(params.get("sampling")), onToken: (id, i) => { streamed[i] = id; }});
    const greedy = await generator.generate(prompt, {maxNewTokens: 32});
    generator.reset();
    const again = await generator.generate(prompt, {maxNewTokens: 32});
    const stopped = await generator.generate(prompt, {maxNewTokens: 32, eosTokenId: [greedy[3]]});
    let overflow = null;
    try {
      await generator.generate(prompt, {maxNewTokens: mod.MAX_LENGTH});
    } catch (e) {
      overflow = `${e.name}: ${e.message}`;
    }
    const chunk = generator.prefillChunk;
    generator.destroy();
    const tokenwise = await mod.createGenerator(context, undefined, {prefill: false});
    const oneByOne = await tokenwise.generate(prompt, {maxNewTokens: 32});
    const noChunk = tokenwise.prefillChunk;
    tokenwise.destroy();
    return {ok: true, sampled, streamed, greedy, again, stopped, overflow, oneByOne, chunk, noChunk};
  } catch (e) {
    return {ok: false, error: `${e?.name}: ${e?.message ?? e}`};
  }
})();
</script>
"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """model name -> (the ONNX model, the folder of its generator export)."""
    if MISSING:
        pytest.skip(f"needs the transformers extra (missing: {', '.join(MISSING)})")
    from converter.zoo.generated import generate

    out = {}
    for name in PROMPTS:
        model = generate(SCRIPT, {"model": name, "variant": VARIANTS[name]})
        folder = tmp_path_factory.mktemp(f"generator_{name}")
        graphs = generator_graphs(model, max_length=MAX_LENGTH, chunk=CHUNK,
                                  kv_shape=KV[name], name=name)
        assert graphs.cache == ("sliding" if name == "gpt2" else "in-place")
        export(graphs, folder, format="js", stem="model", force=True)
        out[name] = (model, folder)
    return out


@pytest.fixture(scope="module")
def in_browser(browser: Any, exported: dict[str, tuple[Path, Path]]) -> dict[str, Any]:
    """One browser session: per model the page job (greedy, typed in) and the API job."""
    root = next(iter(exported.values()))[1].parent
    jobs = []
    for name, (_, folder) in exported.items():
        prompt = PROMPTS[name]
        jobs.append({"url": f"/{folder.name}/model.html", "ready": "__webnnReady",
                     "fill": {"#prompt": ", ".join(map(str, prompt)), "#max-new": str(NEW)},
                     "click": "#generate", "timeoutMs": 180000})
        sampling = {"topK": SAMPLING.top_k, "topP": SAMPLING.top_p,
                    "temperature": SAMPLING.temperature, "seed": SAMPLING.seed}
        query = urllib.parse.urlencode({"module": f"/{folder.name}/model.js",
                                        "prompt": json.dumps(prompt),
                                        "sampling": json.dumps(sampling)})
        jobs.append({"url": f"/generator_check.html?{query}", "timeoutMs": 180000})
    (root / "generator_check.html").write_bytes(CHECK_PAGE)  # served as text/html
    with PageServer(root) as server:
        for job in jobs:
            job["url"] = server.url(job["url"])
        answer = run_jobs(jobs, browser)
    results = answer["results"]
    return {name: (results[2 * i], results[2 * i + 1]) for i, name in enumerate(exported)}


def _python_runs(model: Path, name: str) -> dict[str, Any]:
    prompt = PROMPTS[name]
    oracle = OnnxRuntimeDecoder(model, threads=1, kv_shape=KV[name])
    want = oracle.generate(prompt, NEW)
    with Decoder(model, backend="onnxruntime", threads=1, kv_shape=KV[name]) as ours:
        got = ours.generate(prompt, NEW, max_length=MAX_LENGTH, chunk=CHUNK)
        sampled = ours.generate(prompt, NEW, max_length=MAX_LENGTH, chunk=CHUNK,
                                sampling=SAMPLING)
    for step, (a, b) in enumerate(zip(got.logits, want.logits, strict=True)):
        top2 = np.sort(b)[-2:]
        diff = float(np.abs(a - b).max())
        assert top2[1] - top2[0] > 2 * diff, f"step {step}: a near tie (margin " \
                                             f"{top2[1] - top2[0]:.2e}, difference {diff:.2e})"
    assert got.tokens == want.tokens
    return {"onnxruntime": want.tokens, "sampled": sampled.tokens}


@pytest.mark.parametrize("name", list(PROMPTS))
def test_page_streams_onnxruntimes_greedy_tokens(name: str, exported: dict[str, Any],
                                                 in_browser: dict[str, Any]) -> None:
    page, _ = in_browser[name]
    assert page["ok"], page
    want = _python_runs(exported[name][0], name)
    assert page["tokens"] == want["onnxruntime"]
    assert page["streamed"] == page["tokens"]
    assert len(page["tokens"]) == NEW


@pytest.mark.parametrize("name", list(PROMPTS))
def test_generator_api_sampling_reset_eos_and_token_prefill(
        name: str, exported: dict[str, Any], in_browser: dict[str, Any]) -> None:
    _, api = in_browser[name]
    assert api["ok"], api
    want = _python_runs(exported[name][0], name)
    assert api["sampled"] == want["sampled"]  # seeded sampling: Python = browser
    assert api["streamed"] == api["sampled"]
    assert api["sampled"] != want["onnxruntime"]  # it did sample
    assert api["greedy"] == api["again"] == api["oneByOne"] == want["onnxruntime"]
    stop = want["onnxruntime"][3]
    assert api["stopped"] == want["onnxruntime"][:want["onnxruntime"].index(stop) + 1]
    assert api["overflow"].startswith("RangeError: generate:")
    assert (api["chunk"], api["noChunk"]) == (CHUNK, 0)
