"""Decode speed of the tiny Llama (onnxruntime-genai model builder, int4) through the converter
next to onnxruntime and onnxruntime-genai on the original model.

    python benchmarks/decode_llama.py [--threads 1 2] [--tokens 32] [--repeat 15]
        [--warmup 2] [--backends onnxruntime torch reference] [--no-genai] [--model FOLDER]
        [--quick] [--json PATH]

Model: models/make_transformers.py's Llama (hidden 64, 2 layers, 4 heads, 2 KV heads of size
16, vocabulary 512, seed 0), run through the onnxruntime-genai model builder (`-p int4 -e
cpu`: MatMulNBits, GroupQueryAttention, ...) into a folder with its genai_config.json,
generated on first use and cached beside the zoo's generated models
(`converter.zoo.generated.cache_dir()`, keyed by the script's bytes); `--model FOLDER` takes
another builder output folder. Needs the transformers extra (`pip install -e
".[transformers]"`).

Contenders, in one process, each generating `--tokens` tokens greedily after the same prompt
(8 token ids whose continuation has clear top-2 margins over 40 tokens, so every side picks
the same tokens):
- "onnxruntime": `converter.validate.generate.OnnxRuntimeDecoder` on the original model, the
  KV cache growing as the model is exported (`intra_op_num_threads` = threads,
  ORT_ENABLE_ALL) — the baseline of the ratios;
- "onnxruntime-fixed": the same session over the fixed-size KV buffer our decoder uses;
- "genai": onnxruntime-genai (`og.Generator`, its own shared KV buffer; the folder's
  genai_config.json copied with `intra_op_num_threads` = threads), when it is installed;
- "ours-<backend>": `converter.validate.generate.Decoder` (the fixed-size buffer: one prompt
  graph and one decode graph, converted and compiled during the warm-up) on each backend
  ("onnxruntime" by default; "torch", "reference" on request), `threads` passed on.
Timing: `--warmup` untimed generations, then `--repeat` rounds in which every contender
generates once, interleaved with the order rotating every round; per contender the median
decode tokens/s (the tokens after the first, over the decode steps' wall time), the same
over their process CPU time (steadier on a loaded machine; with several threads it also
counts spinning worker threads) and the median prefill time; ratio / cpu ratio =
contender / onnxruntime tokens/s (above 1: faster). Every
contender's tokens are compared with onnxruntime's ("agree"; a disagreement names the first
step and onnxruntime's top-2 margin there). The machine's load average is recorded.

--quick: a smoke run (1 thread, 16 tokens, 1 warm-up + 3 rounds, the onnxruntime backend),
used by the test suite so the script cannot rot. Results are printed as a table and written
as JSON with --json.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from converter.validate.generate import (  # noqa: E402
    Decoder,
    Generation,
    OnnxRuntimeDecoder,
    genai_generate,
)

SCRIPT = ROOT / "models" / "make_transformers.py"
PROMPT = [369, 94, 406, 250, 340, 438, 376, 401]
"""Greedy continuation with top-2 margins >= 9.5e-3 over 40 tokens (logit differences of
the converted graph: <= 4.4e-3), so all sides generate the same tokens."""
BASELINE = "onnxruntime"


# -- the model folder --------------------------------------------------------------------------


def _make_module() -> Any:
    spec = importlib.util.spec_from_file_location("make_transformers_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def genai_folder(cache: Path | None = None) -> Path:
    """The builder's output folder for the tiny Llama (int4, CPU): model.onnx (+ .data) and
    genai_config.json, built on first use and cached (see the module docstring).
    ModuleNotFoundError without torch / transformers / onnxruntime_genai."""
    from converter.zoo.generated import cache_dir

    for module in ("torch", "transformers", "onnxruntime_genai"):
        if importlib.util.find_spec(module) is None:
            raise ModuleNotFoundError(f"the benchmark needs {module} (pip install -e "
                                      "\".[transformers]\")", name=module)
    key = hashlib.sha256(SCRIPT.read_bytes() + b"llama int4 seed 0").hexdigest()[:16]
    folder = (cache or cache_dir()) / f"decode_llama-{key}"
    if (folder / "genai_config.json").is_file():
        return folder
    mt = _make_module()
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="decode_llama_", dir=folder.parent) as tmp:
        src, out = Path(tmp, "hf"), Path(tmp, "out")
        with mt._quiet():
            built = mt.build("llama", 8, 0)
        built.hf_model.save_pretrained(str(src))
        mt._save_tokenizer(src)
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        run = subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder", "-i",
                              str(src), "-o", str(out), "-p", "int4", "-e", "cpu", "-c",
                              str(Path(tmp, "cache"))], capture_output=True, text=True,
                             env=env, check=False)
        if run.returncode != 0:
            tail = "\n".join((run.stdout + run.stderr).splitlines()[-20:])
            raise RuntimeError(f"onnxruntime-genai builder failed:\n{tail}")
        try:
            os.replace(out, folder)
        except OSError:  # another process cached it first
            if not (folder / "genai_config.json").is_file():
                raise
    return folder


def _genai_with_threads(folder: Path, threads: int, into: Path) -> Path:
    """A copy of the builder folder whose genai_config.json sets intra_op_num_threads."""
    target = into / f"genai_t{threads}"
    if target.exists():
        return target
    shutil.copytree(folder, target)
    config = json.loads((target / "genai_config.json").read_text(encoding="utf-8"))
    options = config["model"]["decoder"].setdefault("session_options", {})
    if threads:
        options["intra_op_num_threads"] = threads
    (target / "genai_config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    return target


# -- timing ----------------------------------------------------------------------------------


def _agreement(gen: Generation, base: Generation) -> dict[str, Any]:
    if gen.tokens == base.tokens:
        return {"agree": True}
    first = next((i for i, (a, b) in enumerate(zip(gen.tokens, base.tokens, strict=False))
                  if a != b), min(len(gen.tokens), len(base.tokens)))
    margin = None
    if first < len(base.logits):
        top2 = np.sort(base.logits[first])[-2:]
        margin = float(top2[1] - top2[0])
    return {"agree": False, "first_difference": first, "baseline_margin": margin}


def run_rounds(contenders: Mapping[str, Callable[[], Generation]], warmup: int, repeat: int
               ) -> dict[str, list[Generation]]:
    """Every contender generates `warmup` times untimed, then once per round for `repeat`
    rounds, interleaved, the order rotating every round."""
    names = list(contenders)
    for _ in range(warmup):
        for run in contenders.values():
            run()
    out: dict[str, list[Generation]] = {k: [] for k in names}
    for i in range(repeat):
        for k in names[i % len(names):] + names[:i % len(names)]:
            out[k].append(contenders[k]())
    return out


def bench(folder: Path, threads: Sequence[int], backends: Sequence[str], tokens: int,
          warmup: int, repeat: int, genai: bool, prompt: Sequence[int] = PROMPT
          ) -> list[dict[str, Any]]:
    """One row per (thread count, contender); see the module docstring."""
    model = folder / "model.onnx"
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="decode_llama_genai_") as tmp:
        for t in threads:
            contenders: dict[str, Callable[[], Generation]] = {}
            ort = OnnxRuntimeDecoder(model, threads=t)
            ort_fixed = OnnxRuntimeDecoder(model, threads=t, cache="fixed")
            contenders[BASELINE] = functools.partial(ort.generate, prompt, tokens)
            contenders["onnxruntime-fixed"] = functools.partial(ort_fixed.generate, prompt, tokens)
            if genai:
                import onnxruntime_genai as og

                g_model = og.Model(str(_genai_with_threads(folder, t, Path(tmp))))
                contenders["genai"] = functools.partial(genai_generate, g_model, prompt, tokens)
            decoders: dict[str, Decoder] = {}
            for backend in backends:
                decoders[backend] = Decoder(model, backend=backend, threads=t)
                contenders[f"ours-{backend}"] = functools.partial(decoders[backend].generate,
                                                                  prompt, tokens)
            runs = run_rounds(contenders, warmup, repeat)
            base = runs[BASELINE][0]
            base_tps = statistics.median(g.decode_tokens_per_s for g in runs[BASELINE])
            base_cpu = statistics.median(g.decode_cpu_tokens_per_s for g in runs[BASELINE])
            for name, gens in runs.items():
                tps = statistics.median(g.decode_tokens_per_s for g in gens)
                cpu_tps = statistics.median(g.decode_cpu_tokens_per_s for g in gens)
                row: dict[str, Any] = {
                    "threads": t, "contender": name, "tokens": tokens,
                    "decode_tokens_per_s": round(tps, 1),
                    "decode_ms_per_token": round(1000 / tps, 4),
                    "prefill_ms": round(1000 * statistics.median(g.prefill_s for g in gens), 4),
                    "ratio": round(tps / base_tps, 3),
                    "cpu_tokens_per_s": round(cpu_tps, 1),
                    "cpu_ratio": round(cpu_tps / base_cpu, 3)}
                row.update(_agreement(gens[0], base))
                if name.startswith("ours-"):
                    d = decoders[name[len("ours-"):]]
                    row["cache"] = d.cache
                    row["graphs"] = len(d.graphs)
                rows.append(row)
    return rows


def _table(rows: Sequence[Mapping[str, Any]]) -> str:
    head = (f"{'threads':>7}  {'contender':<20} {'tokens/s':>9} {'ms/token':>9} "
            f"{'prefill ms':>10} {'ratio':>6} {'cpu tok/s':>9} {'cpu ratio':>9}  agree")
    lines = [head, "-" * len(head)]
    for r in rows:
        agree = "yes" if r["agree"] else (f"no (from token {r['first_difference']}, margin "
                                          f"{r['baseline_margin']})")
        lines.append(f"{r['threads']:>7}  {r['contender']:<20} "
                     f"{r['decode_tokens_per_s']:>9.1f} {r['decode_ms_per_token']:>9.4f} "
                     f"{r['prefill_ms']:>10.3f} {r['ratio']:>6.3f} "
                     f"{r['cpu_tokens_per_s']:>9.1f} {r['cpu_ratio']:>9.3f}  {agree}")
    return "\n".join(lines)


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1])
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--backends", nargs="+", default=["onnxruntime"])
    parser.add_argument("--no-genai", action="store_true", help="leave onnxruntime-genai out")
    parser.add_argument("--model", type=Path, help="a model builder output folder")
    parser.add_argument("--quick", action="store_true", help="a smoke run (see the docstring)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if args.quick:
        args.threads, args.tokens, args.warmup, args.repeat = [1], 16, 1, 3
        args.backends = ["onnxruntime"]
    if not 1 <= args.tokens <= 40:
        parser.error("--tokens must be 1..40 (the prompt's clear margins; context 64)")
    folder = args.model or genai_folder()
    genai = not args.no_genai and importlib.util.find_spec("onnxruntime_genai") is not None
    load_before = _load()
    start = time.perf_counter()
    rows = bench(folder, args.threads, args.backends, args.tokens, args.warmup, args.repeat,
                 genai)
    result = {"model": str(folder), "prompt": PROMPT, "rows": rows,
              "seconds": round(time.perf_counter() - start, 1),
              "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                          "python": platform.python_version()},
              "load_before": load_before, "load_after": _load()}
    print(_table(rows))
    print(f"(decode tokens/s: median of {args.repeat} rounds; ratio = contender / "
          f"{BASELINE}; load {load_before} -> {result['load_after']})")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
