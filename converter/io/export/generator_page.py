"""The page of a decoder export (`<stem>.html`, next to the generator module `<stem>.js` of
`converter.io.export.generator_js`): a user types token ids (spaces or commas between them),
picks greedy or seeded sampling (top-k, top-p, temperature, seed), presses Generate and
watches the ids stream in, with the time to the first token and the decode speed. No
tokenizer: ids in, ids out.

Like the graph page (`converter.io.export.html_page`) it says how to serve the folder and why
file:// fails, and exposes promises for automated checks (invisible to users):
`globalThis.__webnnReady` settles once the generator is built (`{ok: true}` or `{ok: false,
error}`), `globalThis.__webnnResult` once the first Generate is done (`{ok: true, tokens,
streamed, timings: {firstTokenMs, decodeTokensPerS}}`, `streamed` being the ids onToken
gave) or failed. Model text reaches the markup through `html_literal` and the script
through `js_string` only.
"""

from __future__ import annotations

from converter.io.export.html_page import PAGE_HOOKS, PAGE_STATUS
from converter.io.export.javascript import check_stem
from converter.io.export.literals import html_literal, js_string

__all__ = ["generator_page"]

_PAGE = r"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>WebNN generator: __NAME__</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; max-width: 60rem; }
  input[type=text] { width: 100%; font-family: monospace; }
  #tokens { background: #f4f4f4; padding: .75rem; min-height: 3rem; font-family: monospace;
            white-space: pre-wrap; word-break: break-word; }
  label { margin-right: 1rem; }
  .error { color: #b00020; }
</style>
</head>
<body>
<h1>WebNN generator: __NAME__</h1>
__STATUS__
<p>Serve this folder over HTTP, for example with <code>python3 -m http.server</code> in it,
and open <a href="http://localhost:8000/__PAGE__">http://localhost:8000/__PAGE__</a> in a
browser with WebNN (<code>navigator.ml</code>). Browsers block module scripts
(<code>__MODULE_FILE__</code>) and <code>fetch()</code> of the weights on <code>file://</code>
pages.</p>
</details>
<p>The KV cache holds __MAX_LENGTH__ positions (prompt plus new tokens)__CHUNK_TEXT__.</p>
<form id="controls">
  <p><label for="prompt">Prompt token ids (separated by spaces or commas)</label>
  <input id="prompt" type="text" value="1 2 3" spellcheck="false"></p>
  <p><label>New tokens <input id="max-new" type="number" min="1" value="32"></label>
  <label>Stop at id <input id="eos" type="text" size="8" placeholder="none"></label></p>
  <p><label>Choice <select id="mode"><option value="greedy">greedy (argmax)</option>
    <option value="sample">seeded sampling</option></select></label>
  <label>top-k <input id="top-k" type="number" min="0" value="40"></label>
  <label>top-p <input id="top-p" type="number" min="0" max="1" step="any" value="1"></label>
  <label>temperature <input id="temperature" type="number" min="0" step="any" value="1"></label>
  <label>seed <input id="seed" type="number" min="0" value="0"></label></p>
  <p><button id="generate" type="submit" disabled>Generate</button></p>
</form>
<h2>Generated ids</h2>
<div id="tokens"></div>
<p id="timings"></p>
<script type="module">
const MODULE_URL = __MODULE__;
const PAGE_FILE = __PAGE_JS__;
const $ = (id) => document.getElementById(id);
__HOOKS__

function ids(text, what) {
  const parts = text.split(/[\s,]+/).filter((p) => p);
  return parts.map((p) => {
    if (!/^\d+$/.test(p)) throw new Error(`${what}: ${JSON.stringify(p)} is not a token id`);
    return Number(p);
  });
}

function sampling() {
  if ($("mode").value === "greedy") return "greedy";
  return {topK: Number($("top-k").value), topP: Number($("top-p").value),
          temperature: Number($("temperature").value), seed: Number($("seed").value)};
}

async function main() {
  if (globalThis.location?.protocol === "file:") {
    status("This page was opened from a file:// URL, where browsers block module scripts " +
           "and fetch() of the weights file. Serve this folder over HTTP: run " +
           `\`python3 -m http.server\` in it and open http://localhost:8000/${PAGE_FILE}`, true);
    return;
  }
  if (!globalThis.navigator || !navigator.ml) {
    status("WebNN is not available in this browser (navigator.ml is missing).", true);
    return;
  }
  let generator;
  try {
    const mod = await import(new URL(MODULE_URL, document.baseURI));
    status("Building the graphs…");
    generator = await mod.createGenerator(await navigator.ml.createContext());
  } catch (e) {
    status(`Could not build the generator: ${e}`, true);
    return;
  }
  $("help").open = false;
  status(`Ready (vocabulary ${generator.vocabSize}).`);
  $("generate").disabled = false;
  settleReady({ok: true});
  $("controls").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("generate").disabled = true;
    $("tokens").textContent = "";
    const streamed = [];
    try {
      const prompt = ids($("prompt").value, "prompt");
      const eos = ids($("eos").value, "stop id");
      status("Generating…");
      const start = performance.now();
      let first = 0;
      const tokens = await generator.generate(prompt, {
        maxNewTokens: Number($("max-new").value), eosTokenId: eos, sampling: sampling(),
        onToken: (id) => {
          if (!streamed.length) first = performance.now();
          streamed.push(id);
          $("tokens").textContent += (streamed.length > 1 ? " " : "") + id;
          return new Promise((resolve) => setTimeout(resolve, 0));  // let the page repaint
        }});
      const end = performance.now();
      const timings = {firstTokenMs: first - start,
                       decodeTokensPerS: tokens.length > 1 ? (tokens.length - 1) * 1000 / (end - first) : null};
      $("timings").textContent = `First token after ${timings.firstTokenMs.toFixed(1)} ms` +
        (timings.decodeTokensPerS ? `; then ${timings.decodeTokensPerS.toFixed(1)} tokens/s` : "") +
        " (with the page's repaint between tokens).";
      status(`Done: ${tokens.length} tokens.`);
      settleResult({ok: true, tokens, streamed, timings});
    } catch (e) {
      status(`Generation failed: ${e}`, true);
    } finally {
      $("generate").disabled = false;
    }
  });
}
main();
</script>
</body>
</html>
""".replace("__STATUS__", PAGE_STATUS).replace("__HOOKS__", PAGE_HOOKS)


def generator_page(stem: str, name: str, max_length: int, chunk: int) -> str:
    """The page text for the generator module `<stem>.js` (module docstring)."""
    check_stem(stem)
    chunk_text = (f"; prompts run in chunks of {int(chunk)} tokens, the rest one token at a "
                  f"time" if chunk else "; prompts run one token at a time")
    return (_PAGE.replace("__PAGE__", html_literal(f"{stem}.html"))
            .replace("__MODULE_FILE__", html_literal(f"{stem}.js"))
            .replace("__MAX_LENGTH__", str(int(max_length)))
            .replace("__CHUNK_TEXT__", html_literal(chunk_text))
            .replace("__PAGE_JS__", js_string(f"{stem}.html"))
            .replace("__MODULE__", js_string(f"./{stem}.js"))
            .replace("__NAME__", html_literal(name)))  # last: the model's text
