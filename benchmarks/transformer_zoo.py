"""The transformer zoo on the onnxruntime backend next to onnxruntime on the original models,
and the conversion time of int4 LLMs next to onnxruntime's session creation.

    python benchmarks/transformer_zoo.py [--threads 1 2] [--repeat N] [--warmup N]
        [--pause S] [--only TEXT ...] [--rows N] [--no-latency] [--no-convert]
        [--no-graphs] [--large] [--large-size HIDDEN LAYERS] [--convert-repeat N]
        [--json PATH] [--quick]

Latency: every row of models/zoo_transformers.toml (read with `converter.zoo`: generated
and cached by models/make_transformers.py; inputs from the row's recipes), converted once,
then for each thread count, in one process and on the same inputs, an onnxruntime
InferenceSession on the original .onnx and the converted model through the public API
(`ConversionResult.run(inputs, backend="onnxruntime", threads=...)` on the source-side
inputs, its first, compiling call untimed: budget and feed checks, backend call and output
wrapping included), both with
ORT_ENABLE_ALL and `intra_op_num_threads` = threads (the helpers of
benchmarks/runtime_zoo.py). Timing: `--warmup` untimed rounds, then
`--repeat` rounds in which each side runs once, the order alternating; with several threads
each side first runs once untimed after a `--pause` (the other session's worker threads
spin-wait after a run and would take the cores). Reported per row: the median wall times,
ratio = median(backend) / median(original), and the spread of the per-round paired ratios
(25th-75th percentile); per thread count the geometric mean and the worst ratio. Both
sides' outputs are checked against each other with the row's tolerance (max|ours −
original| ≤ atol + rtol·max|original|, column "ok"). The ONNX node counts of the original
and of the lowered graph, and of both graphs as onnxruntime optimizes them (the
`optimized_model_filepath` of a session with the same options), are listed beside them.

Conversion (`--no-convert` skips it): the int4 LLM rows (`*_genai_int4`: the
onnxruntime-genai builder's MatMulNBits decoders) and, with `--large`, a Llama of hidden
size 512 and 4 layers (`--large-size` changes both) built the same way
(models/make_transformers.py with its LLM width and depth raised; cached beside the zoo's
generated models). For each: `converter.convert`
of the file (reading included) next to `onnxruntime.InferenceSession` on the same file
(ORT_ENABLE_ALL, one thread; benchmarks/convert_int4.py's `session_seconds`, which also
makes and caches the `--large` Llama and gives its input shapes), and the onnxruntime backend's compile (ONNX lowering +
session); medians of `--convert-repeat` interleaved runs.

Targets (issue 11): geometric mean ≤ 1.2, worst ≤ 1.5 at 1 and 2 threads; converting an int4
LLM takes less time than onnxruntime's session creation for it.

--quick: a smoke run (`--rows` rows, default 3: BERT TorchScript, BERT int4, Llama genai
int4; 1 thread, 1 warm-up, 5 rounds; the conversion section on the tiny int4 row only), used
by tests/benchmarks/test_transformer_zoo.py. Results are printed as tables and written as
JSON with --json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import convert_int4 as ci  # noqa: E402  (benchmarks/convert_int4.py: Llamas, session time)
import runtime_zoo as rz  # noqa: E402  (benchmarks/runtime_zoo.py: shared helpers)
from interleaved_timing import Runner, agree  # noqa: E402

MANIFEST = ROOT / "models" / "zoo_transformers.toml"
QUICK_ROWS = ("transformers_bert_torchscript", "transformers_bert_int4",
              "transformers_llama_genai_int4")
PAUSE_S = 0.01
LARGE = {"hidden": 512, "layers": 4}


# -- rows ------------------------------------------------------------------------------------
def transformer_rows(names: Sequence[str] | None = None) -> list[tuple[rz.Model, Any]]:
    """(Model, ZooEntry) for the rows of the transformer zoo (all, or those named), in
    manifest order; rows whose model cannot be generated are left out with a message."""
    from converter.zoo.manifest import read_manifest

    out = []
    for entry in read_manifest(MANIFEST, names=names):
        if entry.path is None:
            print(f"{entry.name}: skipped ({entry.missing})", file=sys.stderr)
            continue
        out.append((rz.entry_model(entry, entry.name, "onnx"), entry))
    return out


# -- helpers ---------------------------------------------------------------------------------
def time_pairs(original: Runner, ours: Runner, warmup: int, repeat: int,
               pause: float) -> tuple[list[float], list[float]]:
    """Wall times (seconds) of `repeat` rounds, each running both once, the order
    alternating. With `pause` > 0 each timed run follows a pause and one untimed run of the
    same side (see the module docstring)."""
    for _ in range(warmup):
        original()
        ours()
    times: dict[str, list[float]] = {"original": [], "ours": []}
    runners = {"original": original, "ours": ours}
    for i in range(repeat):
        order = ("original", "ours") if i % 2 == 0 else ("ours", "original")
        for k in order:
            run = runners[k]
            if pause:
                time.sleep(pause)
                run()
            t = time.perf_counter()
            run()
            times[k].append(time.perf_counter() - t)
    return times["original"], times["ours"]


def _quantiles(values: Sequence[float]) -> tuple[float, float]:
    q = statistics.quantiles(values, n=4) if len(values) >= 2 else [values[0]] * 3
    return q[0], q[2]


def count_nodes(graph: Any) -> int:
    """Nodes of an ONNX graph, subgraphs (If / Loop bodies) included."""
    n = 0
    for node in graph.node:
        n += 1
        for attr in node.attribute:
            if attr.HasField("g"):
                n += count_nodes(attr.g)
            for g in attr.graphs:
                n += count_nodes(g)
    return n


def optimized_nodes(model: bytes, threads: int = 1) -> tuple[int, dict[str, int]]:
    """Node count and op histogram of `model` as onnxruntime optimizes it (ORT_ENABLE_ALL,
    the backend's session options)."""
    import onnx
    import onnxruntime as ort

    with tempfile.TemporaryDirectory() as tmp:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        options.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", "0")
        options.optimized_model_filepath = str(Path(tmp) / "optimized.onnx")
        ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        graph = onnx.load(options.optimized_model_filepath, load_external_data=False).graph
    hist: dict[str, int] = {}
    for node in graph.node:
        key = f"{node.domain}::{node.op_type}" if node.domain else node.op_type
        hist[key] = hist.get(key, 0) + 1
    return count_nodes(graph), dict(sorted(hist.items()))


# -- latency ---------------------------------------------------------------------------------
def bench_row(model: rz.Model, entry: Any, threads: Sequence[int], warmup: int, repeat: int,
              pause: float, graphs: bool = True) -> list[dict[str, Any]]:
    """One result per thread count for one zoo row (see the module docstring)."""
    import onnx

    from converter.runtimes.onnxruntime.backend import OnnxRuntimeBackend

    t0 = time.perf_counter()
    result = rz.convert(model)
    convert_s = time.perf_counter() - t0
    feeds = rz.make_inputs(model, result)
    nodes: dict[str, Any] = {}
    if graphs:
        lowered = OnnxRuntimeBackend("cpu").lower(result.graph).SerializeToString()
        nodes = {"original": count_nodes(onnx.load_from_string(model.data).graph),
                 "lowered": count_nodes(onnx.load_from_string(lowered).graph)}
        try:
            nodes["original_optimized"], nodes["original_ops"] = optimized_nodes(model.data)
            nodes["lowered_optimized"], nodes["lowered_ops"] = optimized_nodes(lowered)
        except Exception as exc:  # noqa: BLE001 - a report detail, not a failure
            nodes["error"] = f"{type(exc).__name__}: {exc}"
    rows = []
    for t in threads:
        original = rz.ort_original(model, t, feeds)
        ours = rz.backend_runner(result, "onnxruntime", t, feeds)
        ok, err = agree(ours(), original(), entry.atol, entry.rtol)
        orig_s, ours_s = time_pairs(original, ours, warmup, repeat, pause if t > 1 else 0.0)
        paired = [b / a for a, b in zip(orig_s, ours_s, strict=True)]
        lo, hi = _quantiles(paired)
        base, mine = statistics.median(orig_s), statistics.median(ours_s)
        rows.append({"model": model.name, "threads": t, "convert_s": round(convert_s, 3),
                     "original_ms": base * 1e3, "ours_ms": mine * 1e3, "ratio": mine / base,
                     "ratio_p25": lo, "ratio_p75": hi, "ok": ok, "max_abs_error": err,
                     "atol": entry.atol, "rtol": entry.rtol, "nodes": nodes})
    return rows


def _geomean(values: Sequence[float]) -> float:
    return rz._geomean(values)


def summarise(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Geometric mean (and that of the rows' 25th / 75th percentile paired ratios) and worst
    ratio per thread count, the rows over 1.5 and whether every row's outputs agreed."""
    out = []
    for t in sorted({r["threads"] for r in rows}):
        mine = [r for r in rows if r["threads"] == t]
        worst = max(mine, key=lambda r: r["ratio"])
        out.append({"threads": t, "models": len(mine),
                    "geomean_ratio": _geomean([r["ratio"] for r in mine]),
                    "geomean_p25": _geomean([r["ratio_p25"] for r in mine]),
                    "geomean_p75": _geomean([r["ratio_p75"] for r in mine]),
                    "worst_ratio": worst["ratio"], "worst_model": worst["model"],
                    "over_1_5": sorted(r["model"] for r in mine if r["ratio"] > 1.5),
                    "all_ok": all(r["ok"] for r in mine)})
    return out


def print_rows(rows: Sequence[Mapping[str, Any]]) -> None:
    print(f"{'model':<44} {'thr':>3} {'original ms':>11} {'backend ms':>10} {'ratio':>6} "
          f"{'p25-p75':>11} {'ok':>2} {'nodes o/l':>10} {'optimized o/l':>13}")
    for r in rows:
        n = r["nodes"]
        nodes = f"{n['original']}/{n['lowered']}" if "original" in n else "-"
        opt = (f"{n['original_optimized']}/{n['lowered_optimized']}"
               if "original_optimized" in n else "-")
        print(f"{r['model'][:44]:<44} {r['threads']:>3} {r['original_ms']:>11.3f} "
              f"{r['ours_ms']:>10.3f} {r['ratio']:>6.3f} "
              f"{r['ratio_p25']:>5.2f}-{r['ratio_p75']:<5.2f} {'y' if r['ok'] else 'N':>2} "
              f"{nodes:>10} {opt:>13}")


# -- conversion vs session creation ----------------------------------------------------------
def bench_conversion(name: str, path: Path, convert_kwargs: Mapping[str, Any],
                     repeat: int) -> dict[str, Any]:
    """Median seconds of converter.convert(path), onnxruntime's session creation on the
    file, and the onnxruntime backend's compile of the converted graph, interleaved."""
    import converter
    from converter.runtimes import get_backend

    times: dict[str, list[float]] = {"convert": [], "ort_session": [], "backend_compile": []}
    for i in range(repeat):
        steps = ["convert", "ort_session"] if i % 2 == 0 else ["ort_session", "convert"]
        for step in steps:
            if step == "convert":
                t = time.perf_counter()
                result = converter.convert(str(path), **convert_kwargs)
                times["convert"].append(time.perf_counter() - t)
            else:
                times["ort_session"].append(ci.session_seconds(path, 1))
        t = time.perf_counter()
        get_backend("onnxruntime", "cpu", threads=1).compile(result.graph)
        times["backend_compile"].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"model": name, "file_mb": round(path.stat().st_size / 2**20, 2),
            "convert_s": med["convert"], "ort_session_s": med["ort_session"],
            "backend_compile_s": med["backend_compile"],
            "convert_over_session": med["convert"] / med["ort_session"],
            "convert_range_s": [min(times["convert"]), max(times["convert"])],
            "ort_session_range_s": [min(times["ort_session"]), max(times["ort_session"])],
            "operations": len(result.graph.operations)}


def conversion_section(names: Sequence[str], large: Sequence[int] | None, repeat: int
                       ) -> list[dict[str, Any]]:
    """The conversion rows: the named zoo rows, and the generated Llama of `large` = (hidden,
    layers) when given (4 heads, 2 key/value heads, 8 new tokens after 4 past ones)."""
    out = []
    for model, entry in transformer_rows(names):
        out.append(bench_conversion(model.name, Path(entry.path), model.convert_kwargs,
                                    repeat))
    if large:
        hidden, layers = large
        path = ci.llama_int4(hidden, layers)
        out.append(bench_conversion(f"llama_h{hidden}_l{layers}_genai_int4", path,
                                    {"input_shapes": ci.input_shapes(hidden, layers)},
                                    repeat))
    return out


def print_conversion(rows: Sequence[Mapping[str, Any]]) -> None:
    print(f"{'model':<40} {'MB':>6} {'convert s':>9} {'ort session s':>13} "
          f"{'convert/session':>15} {'backend compile s':>17}")
    for r in rows:
        print(f"{r['model']:<40} {r['file_mb']:>6.2f} {r['convert_s']:>9.3f} "
              f"{r['ort_session_s']:>13.3f} {r['convert_over_session']:>15.2f} "
              f"{r['backend_compile_s']:>17.3f}")


# -- main ------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--repeat", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--pause", type=float, default=PAUSE_S,
                   help="seconds of sleep before each timed run with several threads")
    p.add_argument("--only", nargs="+", default=[], help="substrings of row names")
    p.add_argument("--rows", type=int, default=None, help="at most this many rows")
    p.add_argument("--no-latency", action="store_true")
    p.add_argument("--no-convert", action="store_true")
    p.add_argument("--no-graphs", action="store_true", help="skip the node counts")
    p.add_argument("--large", action="store_true",
                   help=f"also a generated Llama (hidden {LARGE['hidden']}, "
                        f"{LARGE['layers']} layers, int4) in the conversion section")
    p.add_argument("--large-size", type=int, nargs=2, metavar=("HIDDEN", "LAYERS"),
                   default=None, help="the generated Llama's size (implies --large)")
    p.add_argument("--convert-repeat", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="smoke run (see the docstring)")
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    names: list[str] | None = None
    convert_names = None
    if args.quick:
        names = list(QUICK_ROWS[:args.rows or len(QUICK_ROWS)])
        args.threads, args.warmup, args.repeat = [1], 1, 5
        args.convert_repeat = 1
        convert_names = ["transformers_llama_genai_int4"]
    rows: list[dict[str, Any]] = []
    errors: dict[str, str] = {}
    if not args.no_latency:
        models = transformer_rows(names)
        if args.only:
            models = [(m, e) for m, e in models if any(o in m.name for o in args.only)]
        if args.rows and not args.quick:
            models = models[:args.rows]
        for m, entry in models:
            try:
                new = bench_row(m, entry, args.threads, args.warmup, args.repeat, args.pause,
                                graphs=not args.no_graphs)
            except Exception as exc:  # report and go on with the other rows
                errors[m.name] = f"{type(exc).__name__}: {exc}"
                print(f"{m.name}: {errors[m.name]}", file=sys.stderr)
                continue
            rows += new
            print(" ".join(f"[{r['model']} threads={r['threads']}] {r['ratio']:.3f}"
                           for r in new), file=sys.stderr, flush=True)
        print_rows(rows)
    summary = summarise(rows) if rows else []
    for s in summary:
        print(f"threads={s['threads']}: geomean ratio {s['geomean_ratio']:.3f} (p25-p75 "
              f"{s['geomean_p25']:.3f}-{s['geomean_p75']:.3f}) over {s['models']} rows, "
              f"worst {s['worst_ratio']:.3f} ({s['worst_model']}); rows over 1.5: "
              f"{', '.join(s['over_1_5']) or 'none'}")
    conversion: list[dict[str, Any]] = []
    if not args.no_convert:
        if convert_names is None:
            convert_names = [str(r["name"]) for r in _manifest_rows()
                             if str(r["name"]).endswith("_genai_int4")]
        large = args.large_size or ([LARGE["hidden"], LARGE["layers"]] if args.large
                                    else None)
        conversion = conversion_section(convert_names, None if args.quick else large,
                                        args.convert_repeat)
        print()
        print_conversion(conversion)
    if args.json:
        import onnxruntime

        info = {"python": platform.python_version(), "machine": platform.machine(),
                "cpus": os.cpu_count(), "onnxruntime": onnxruntime.__version__,
                "load": rz._load(), "repeat": args.repeat, "warmup": args.warmup,
                "pause": args.pause}
        args.json.write_text(json.dumps({"info": info, "rows": rows, "summary": summary,
                                         "conversion": conversion, "errors": errors},
                                        indent=2) + "\n")
    bad = any(not r["ok"] for r in rows)
    return 1 if errors or bad else 0


def _manifest_rows() -> list[dict[str, Any]]:
    import tomllib

    rows: list[dict[str, Any]] = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))["model"]
    return rows


if __name__ == "__main__":
    sys.exit(main())
