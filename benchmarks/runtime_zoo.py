"""Latency of converted zoo models on the converter's backends next to the original framework.

    python benchmarks/runtime_zoo.py [--threads 1 2] [--repeat N] [--warmup N]
        [--only TEXT ...] [--backends onnxruntime torch] [--reference] [--quick]
        [--json PATH] [--no-gpu] [--model FILE ... [--shape NAME=D,D,... ...]]

Models: the entries of the shipped zoo manifests (converter/zoo/models/zoo.toml and
zoo_tflite.toml) as `converter.zoo` reads them (conversion options, pinned inputs, input
recipes, random weights), one per network (see `manifest_models`). `--model` benchmarks the named .onnx / .tflite
files instead (inputs seeded uniform; `--shape` fixes an input's free dimensions), e.g.
PP-OCR's text direction classifier (ch_ppocr_mobile_v2.0_cls_infer.onnx, shipped in the
rapidocr-onnxruntime wheel) with `--shape x=1,3,48,192`.

For every model and thread count, in one process and on the same inputs:
- the original framework: an onnxruntime InferenceSession on the original .onnx (same
  session options as the backend: ORT_ENABLE_ALL, `intra_op_num_threads` = threads), or the
  LiteRT Interpreter for .tflite (`num_threads` = threads, default delegates: XNNPACK);
- the converted model through the public API on each backend: `ConversionResult.run(inputs,
  backend=..., threads=threads)` on the source-side inputs (its first call, which compiles
  the graph, is untimed: a timed call is budget check, feed check, backend call, output
  wrapping), on "onnxruntime" (threads option), "torch" when importable (threads option),
  and "reference" only for models whose original runs under 20 ms or with --reference
  (slow: numpy in float64).
Timing: `--warmup` untimed runs, then `--repeat` rounds in which every contender runs once,
interleaved (the order rotating every round) so that load from other processes hits all
alike; with several threads a short pause precedes every run, so that the previous
contender's spinning worker threads do not take cores from the next one. The median wall
time of each is reported, with ratio = backend / original, and the median process CPU time
(steadier on a loaded machine). The geometric mean and the worst ratio are
given per (format, backend, threads). Each backend's outputs are checked against the
original's: max |ours − original| ≤ 1e-3 + 1e-3·max|original| (column "ok").
Caveat with several threads on a machine with as few cores: onnxruntime's worker threads
spin-wait after a run, so the torch backend's column at 2 threads on 2 cores can carry
milliseconds of scheduling delay that it does not have when it runs alone (measured: the
GRU model 11.6 ms interleaved, 0.7 ms alone); the 1-thread columns are not affected.

When the torch backend is benchmarked, a native-torch section (benchmarks/torch_native.py)
times it against the same network run natively in torch (a small torch-built ResNet and a
small transformer encoder exported with torch.onnx.export and converted) on the CPU at each
thread count, and on CUDA where torch.cuda.is_available() (skipped otherwise or with
--no-gpu). The timing itself (interleaved rounds, output checks) is in
benchmarks/interleaved_timing.py.

--quick: a smoke run (one small model, one thread, onnxruntime only, 1 warm-up + 3 rounds),
used by the test suite so the script cannot rot. Results are printed as a table and written as
JSON with --json (per-model medians in milliseconds, ratios, summaries, machine info, load).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import math
import os
import platform
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))  # also when loaded by path (tests/benchmarks)

from interleaved_timing import Runner, matches, time_interleaved  # noqa: E402
from torch_native import torch_section  # noqa: E402

REFERENCE_LIMIT_MS = 20.0
PAUSE_S = 0.05  # between runs with several threads (see time_interleaved)
QUICK_MODEL = "light_squeezenet"


@dataclass
class Model:
    """One zoo model: its bytes, format, conversion options and input recipe."""

    name: str
    load: Callable[[], bytes]
    format: str  # "onnx" or "tflite"
    convert_kwargs: dict[str, Any] = field(default_factory=dict)
    pins: dict[str, np.ndarray] = field(default_factory=dict)
    overrides: Callable[[Any], dict[str, np.ndarray]] | None = None
    """Input values the manifest defines, given the ConversionResult."""
    key: str = ""
    """Identifies the network: models with equal keys are listed once."""
    _data: bytes | None = None

    @property
    def data(self) -> bytes:
        """The model file's bytes (loaded on first use)."""
        if self._data is None:
            self._data = self.load()
        return self._data


# -- model discovery -------------------------------------------------------------------------
def manifest_models() -> list[Model]:
    """The available models of the shipped manifests (converter/zoo/models/zoo.toml and
    zoo_tflite.toml), read by `converter.zoo`. One model per network: the ONNX light models
    are listed with their ConstantOfShape weights as-is and with random weights (same
    network, same speed), and the random variant is kept (meaningful outputs); identical
    files with the same pinned inputs (face_detection_front = face_detection_short_range) are
    listed once."""
    from converter.frontends.detect import detect_format
    from converter.zoo import default_manifests, read_manifests

    manifests = default_manifests()
    chosen: dict[str, Any] = {}
    for entry in read_manifests(manifests):
        if entry.path is None:
            continue
        pins = sorted((k, np.asarray(v).tolist()) for k, v in entry.pin_inputs.items())
        key = f"{entry.sha256 or _digest(Path(entry.path))} {pins}"
        if key not in chosen or entry.weights == "random":
            chosen[key] = entry
    return [entry_model(entry, key, entry.format or detect_format(entry.path))
            for key, entry in chosen.items()]


def entry_model(entry: Any, key: str, fmt: str) -> Model:
    """The benchmark `Model` of a zoo entry: its bytes loaded on demand, its conversion
    options (`converter.zoo.convert_options` less the pins, which `Model` carries itself,
    as feeds too), its pinned inputs and its input overrides."""
    from converter.zoo import convert_options, entry_inputs, load_model

    def load() -> bytes:
        model = load_model(entry)
        return model if isinstance(model, bytes) else Path(model).read_bytes()

    kwargs = {k: v for k, v in convert_options(entry).items() if k != "pin_inputs"}
    return Model(entry.name, load, fmt, kwargs,
                 {k: np.asarray(v) for k, v in entry.pin_inputs.items()},
                 lambda result: entry_inputs(entry, result), key)


def zoo_models() -> list[Model]:
    """Every available zoo model (see `manifest_models`), each network once."""
    models = manifest_models()
    seen: set[str] = set()
    unique = []
    for m in models:
        if m.key not in seen:
            seen.add(m.key)
            unique.append(m)
    return unique


def file_model(path: Path, shapes: Sequence[str] = ()) -> Model:
    """A model file named on the command line; `shapes` ("name=1,3,48,192") fix inputs'
    free dimensions (`converter.convert(input_shapes=...)`)."""
    given = dict(item.split("=", 1) for item in shapes)
    kwargs = {"input_shapes": {k: [int(d) for d in v.split(",")] for k, v in given.items()}
              } if given else {}
    fmt = "tflite" if path.suffix == ".tflite" else "onnx"
    return Model(path.stem, path.read_bytes, fmt, kwargs, key=str(path))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- inputs ----------------------------------------------------------------------------------
def make_inputs(model: Model, result: Any, seed: int = 0) -> dict[str, np.ndarray]:
    """Inputs for the converted model's (unpinned) inputs, in the source framework's dtypes:
    the manifest's values where it defines them, else seeded uniform in [-1, 1] (floats) /
    [0, 10) (integers)."""
    rng = np.random.default_rng(seed)
    given = model.overrides(result) if model.overrides is not None else {}
    out = {}
    for vi in result.inputs:
        if vi.name in model.pins:
            continue
        if vi.name in given:
            out[vi.name] = np.asarray(given[vi.name], dtype=vi.dtype)
            continue
        shape, dt = [int(d) for d in vi.shape], np.dtype(vi.dtype)
        if dt.kind == "f":
            out[vi.name] = rng.uniform(-1.0, 1.0, shape).astype(dt)
        elif dt.kind == "b":
            out[vi.name] = rng.integers(0, 2, shape).astype(dt)
        else:
            out[vi.name] = rng.integers(0, 10, shape).astype(dt)
    return out


# -- contenders ------------------------------------------------------------------------------


def ort_original(model: Model, threads: int, feeds: Mapping[str, np.ndarray]) -> Runner:
    """onnxruntime on the original model, configured like the backend's sessions (pinned
    inputs are fed their pinned values)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    session = ort.InferenceSession(model.data, options, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    mine = {k: v for k, v in {**feeds, **model.pins}.items() if k in names}
    return lambda: session.run(None, mine)


def litert_original(model: Model, threads: int, feeds: Mapping[str, np.ndarray]) -> Runner:
    """The LiteRT Interpreter (default delegates) with `num_threads` = threads."""
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_content=model.data, num_threads=threads)
    it.allocate_tensors()
    ins = [(d["index"], feeds[d["name"]]) for d in it.get_input_details()]
    outs = [d["index"] for d in it.get_output_details()]

    def run() -> list[np.ndarray]:
        for index, value in ins:
            it.set_tensor(index, value)
        it.invoke()
        return [it.get_tensor(i) for i in outs]

    return run


def convert(model: Model) -> Any:
    """The ConversionResult of the model (`converter.convert`) for target "spec": the
    unrestricted graph, which is what a Python backend runs best (the default target's
    browser rewrites, e.g. int64 narrowed to int32, are for browsers)."""
    import converter

    return converter.convert(model.data, pin_inputs=model.pins or None, fmt=model.format,
                             target="spec", **model.convert_kwargs)


def backend_runner(result: Any, backend: str, threads: int, feeds: Mapping[str, np.ndarray]
                   ) -> Runner:
    """The converted model as a user runs it: `ConversionResult.run(feeds, backend=...,
    threads=...)` on the source-side `feeds`, compiled here once (`ConversionResult.compile`:
    run budgets, the backend's compilation), so that each timed run is what every call after
    a user's first costs (the active budgets compared with the measured estimate, feed
    check, backend call, outputs in the source dtypes)."""
    threads = 0 if backend == "reference" else threads
    result.run(feeds, backend=backend, threads=threads)
    names = result.output_names

    def run() -> list[np.ndarray]:
        out = result.run(feeds, backend=backend, threads=threads)
        return [out[n] for n in names]

    return run


# -- the benchmark ---------------------------------------------------------------------------
def bench_model(model: Model, threads: Sequence[int], backends: Sequence[str],
                reference: bool | None, warmup: int, repeat: int) -> list[dict[str, Any]]:
    """Rows (one per thread count) for one model. `reference`: time the reference backend
    (True), never (False), or when the original runs under REFERENCE_LIMIT_MS (None)."""
    t0 = time.perf_counter()
    result = convert(model)
    convert_s = time.perf_counter() - t0
    if model.format == "tflite":
        original, framework = litert_original, "litert"
    else:
        original, framework = ort_original, "onnxruntime"
    feeds = make_inputs(model, result)
    rows = []
    for t in threads:
        runners: dict[str, Runner] = {framework + "-original": original(model, t, feeds)}
        expected = runners[framework + "-original"]()
        checks: dict[str, dict[str, Any]] = {}
        for b in backends:
            runners[b] = backend_runner(result, b, t, feeds)
            ok, err = matches(runners[b](), expected)
            checks[b] = {"ok": ok, "max_abs_error": err}
        medians, cpu = time_interleaved(runners, warmup, repeat, PAUSE_S if t > 1 else 0.0)
        base = medians[framework + "-original"]
        base_cpu = cpu[framework + "-original"]
        row: dict[str, Any] = {"model": model.name, "format": model.format, "threads": t,
                               "framework": framework, "convert_s": round(convert_s, 3),
                               "original_ms": base * 1e3, "original_cpu_ms": base_cpu * 1e3,
                               "backends": {}}
        for b in backends:
            row["backends"][b] = {"ms": medians[b] * 1e3, "ratio": medians[b] / base,
                                  "cpu_ms": cpu[b] * 1e3,
                                  "cpu_ratio": cpu[b] / base_cpu if base_cpu > 0 else None,
                                  **checks[b]}
        if "reference" not in backends and t == threads[0] and (reference or (
                reference is None and base * 1e3 < REFERENCE_LIMIT_MS)):  # one thread
            run_ref = backend_runner(result, "reference", t, feeds)
            ok, err = matches(run_ref(), expected)
            ref, _ = time_interleaved({"reference": run_ref}, 0, max(1, min(3, repeat)))
            row["backends"]["reference"] = {"ms": ref["reference"] * 1e3,
                                            "ratio": ref["reference"] / base, "ok": ok,
                                            "max_abs_error": err}
        rows.append(row)
    return rows


def _geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(x) for x in values) / len(values))


def summarise(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Geometric mean and worst wall-time ratio per (format, backend, threads), and the
    geometric mean of the CPU-time ratios where measured."""
    groups: dict[tuple[str, str, int], list[tuple[float, str, float | None]]] = {}
    for r in rows:
        for b, v in r["backends"].items():
            groups.setdefault((r["format"], b, r["threads"]), []).append(
                (v["ratio"], r["model"], v.get("cpu_ratio")))
    out = []
    for (fmt, b, t), ratios in sorted(groups.items()):
        worst = max(ratios, key=lambda x: x[0])
        cpu = [c for _, _, c in ratios if c]
        out.append({"format": fmt, "backend": b, "threads": t, "models": len(ratios),
                    "geomean_ratio": _geomean([x for x, _, _ in ratios]),
                    "worst_ratio": worst[0], "worst_model": worst[1],
                    "geomean_cpu_ratio": _geomean(cpu) if len(cpu) == len(ratios) else None})
    return out


def print_rows(rows: Sequence[Mapping[str, Any]]) -> None:
    """The per-model table: wall-time medians, ratio to the original (and CPU-time ratio),
    whether the outputs matched."""
    cols = list(dict.fromkeys(b for r in rows for b in r["backends"]))
    head = f"{'model':<38} {'thr':>3} {'original ms':>11}"
    for b in cols:
        head += f" {b[:12] + ' ms':>15} {'ratio':>6} {'cpu':>6} {'ok':>2}"
    print(head)
    for r in rows:
        line = f"{r['model'][:38]:<38} {r['threads']:>3} {r['original_ms']:>11.2f}"
        for b in cols:
            v = r["backends"].get(b)
            if v is None:
                line += f" {'':>15} {'':>6} {'':>6} {'':>2}"
                continue
            cpu = f"{v['cpu_ratio']:.3f}" if v.get("cpu_ratio") else "-"
            line += f" {v['ms']:>15.2f} {v['ratio']:>6.3f} {cpu:>6} {'y' if v['ok'] else 'N':>2}"
        print(line)


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--only", nargs="+", default=[], help="substrings of model names")
    p.add_argument("--backends", nargs="+", default=None,
                   help="default: onnxruntime, and torch when importable")
    p.add_argument("--reference", action="store_true",
                   help="also time the reference backend on every model (slow)")
    p.add_argument("--quick", action="store_true", help="smoke run: one small model")
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--no-gpu", action="store_true", help="skip the CUDA section")
    p.add_argument("--model", nargs="+", default=[], help="model files instead of the zoo")
    p.add_argument("--shape", nargs="+", default=[], metavar="NAME=D,D,...",
                   help="input shapes of --model files")
    args = p.parse_args(argv)
    backends = args.backends or (["onnxruntime"] + (["torch"] if importlib.util.find_spec(
        "torch") else []))
    models = [file_model(Path(f), args.shape) for f in args.model] if args.model \
        else zoo_models()
    if args.quick:
        models = [m for m in models if m.name.startswith(QUICK_MODEL)][:1] or models[:1]
        args.threads, args.warmup, args.repeat = [1], 1, 3
        backends = ["onnxruntime"]
        args.no_gpu = True
    if args.only:
        models = [m for m in models if any(o in m.name for o in args.only)]
    load_before = _load()
    rows: list[dict[str, Any]] = []
    errors: dict[str, str] = {}
    for m in models:
        try:
            new = bench_model(m, args.threads, backends,
                              False if args.quick else (True if args.reference else None),
                              args.warmup, args.repeat)
        except Exception as exc:  # report and go on with the other models
            errors[m.name] = f"{type(exc).__name__}: {exc}"
            print(f"{m.name}: {errors[m.name]}", file=sys.stderr)
            continue
        rows += new
        for r in new:
            ratios = ", ".join(f"{b} {v['ratio']:.3f}" for b, v in r["backends"].items())
            print(f"[{m.name} threads={r['threads']}] original {r['original_ms']:.2f} ms; "
                  f"{ratios}", file=sys.stderr, flush=True)
    print_rows(rows)
    summary = summarise(rows)
    print()
    for s in summary:
        cpu = (f" (CPU time: {s['geomean_cpu_ratio']:.3f})" if s["geomean_cpu_ratio"]
               else "")
        print(f"{s['format']:<7} {s['backend']:<12} threads={s['threads']}: geomean ratio "
              f"{s['geomean_ratio']:.3f}{cpu} over {s['models']} models, worst "
              f"{s['worst_ratio']:.3f} ({s['worst_model']})")
    native = [] if args.quick or "torch" not in backends else [
        row for t in args.threads for row in torch_section("cpu", args.warmup, args.repeat, t)]
    gpu = [] if args.no_gpu else [
        row for graphs in (False, True)
        for row in torch_section("cuda", args.warmup, args.repeat, cuda_graphs=graphs)]
    for g in native + gpu:
        replay = " (CUDA graphs)" if g["cuda_graphs"] else ""
        print(f"{g['device']}{replay} threads={g['threads']} {g['model']}: native torch "
              f"{g['native_ms']:.2f} ms, torch backend {g['backend_ms']:.2f} ms, ratio "
              f"{g['ratio']:.3f}, ok {g['ok']}")
    if args.json:
        import onnxruntime

        info = {"python": platform.python_version(), "machine": platform.machine(),
                "cpus": os.cpu_count(), "onnxruntime": onnxruntime.__version__,
                "load_before": load_before, "load_after": _load(),
                "repeat": args.repeat, "warmup": args.warmup}
        args.json.write_text(json.dumps({"info": info, "rows": rows, "summary": summary,
                                         "native_torch": native, "gpu": gpu,
                                         "errors": errors}, indent=2) + "\n")
    bad = any(not v["ok"] for r in rows for v in r["backends"].values()) or any(
        not g["ok"] for g in native + gpu)
    return 1 if errors or bad else 0


if __name__ == "__main__":
    sys.exit(main())
