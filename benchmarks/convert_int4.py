"""Converting int4 LLMs next to onnxruntime's session creation for them (issue 11: converting
an int4 LLM must take less time than onnxruntime needs to create a session for it).

    python benchmarks/convert_int4.py [--size tiny h512 h1024 h2048 h2048x8]
        [--repeat N] [--threads N] [--profile] [--json PATH] [--quick]

Models: Llamas (LlamaForCausalLM, random weights, 4 attention heads, 2 key/value heads,
vocabulary 512, MLP width 2·hidden) through the onnxruntime-genai model builder, int4 CPU
(MatMulNBits, block 32; GroupQueryAttention, SkipSimplifiedLayerNormalization, ...), made by
models/make_transformers.py with its LLM width and depth set (`SIZES`: "tiny" is the
transformer zoo's `transformers_llama_genai_int4`, hidden 64, 2 layers; "h512" and "h1024"
are the `--large` models of benchmarks/transformer_zoo.py, cached under the same names) and
cached beside the zoo's generated models (`converter.zoo.generated.cache_dir`, keyed by the
script's bytes and the size). The larger ones take about a minute to generate the first
time.

Timing, in one process after one untimed round of each (imports and first-use caches
excluded): `converter.convert(path, input_shapes=...)` (reading the file included; 8 new
tokens after 4 past ones) next to `onnxruntime.InferenceSession(path)` with
ORT_ENABLE_ALL graph optimizations (onnxruntime's default, what a user gets),
`intra_op_num_threads` = `--threads` (default 1, as benchmarks/transformer_zoo.py) on the
CPU provider; `--repeat` rounds (default 9), the order alternating, a `gc.collect()` before
each call; reported: the medians, the ratio convert/session (target < 1) and the spread
(min-max) of each. `--profile` prints the cProfile top (by tottime, then
by cumtime) of 10 more conversions per model.
`--quick`: the tiny model, 3 rounds (tests/benchmarks/test_convert_int4.py). Results are
printed as a table and written as JSON with --json.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib.util
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

SCRIPT = ROOT / "models" / "make_transformers.py"
SIZES: dict[str, tuple[int, int]] = {"tiny": (64, 2), "h512": (512, 4), "h1024": (1024, 4),
                                     "h2048": (2048, 4), "h2048x8": (2048, 8)}
"""Model name -> (hidden size, layers)."""
DEFAULT_SIZES = ("tiny", "h512", "h1024", "h2048x8")
HEADS, KV_HEADS = 4, 2
NEW_TOKENS, PAST_TOKENS = 8, 4


def llama_int4(hidden: int, layers: int) -> Path:
    """The genai-builder int4 Llama of `hidden` width and `layers` layers (generated once,
    then cached; the file name is benchmarks/transformer_zoo.py's for its `--large` model)."""
    from converter.zoo.generated import cache_dir

    key = hashlib.sha256(SCRIPT.read_bytes() + f"{hidden},{layers}".encode()).hexdigest()[:16]
    out = cache_dir() / f"transformer_zoo_llama_h{hidden}_l{layers}_genai_int4-{key}.onnx"
    if out.is_file():
        return out
    spec = importlib.util.spec_from_file_location("make_transformers_int4", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    setattr(module, "LLM_HIDDEN", hidden)  # noqa: B010 - the script's module constants
    setattr(module, "LAYERS", layers)  # noqa: B010
    tmp = out.with_name(f".{out.name}.{os.getpid()}")
    try:
        module.make(tmp, model="llama", variant="genai_int4")
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            tmp.unlink()
    return out


def input_shapes(hidden: int, layers: int) -> dict[str, list[int]]:
    """The conversion's input shapes: 8 new tokens after 4 past ones, batch 1."""
    shapes = {"input_ids": [1, NEW_TOKENS], "attention_mask": [1, NEW_TOKENS + PAST_TOKENS]}
    shapes.update({f"past_key_values.{i}.{kv}": [1, KV_HEADS, PAST_TOKENS, hidden // HEADS]
                   for i in range(layers) for kv in ("key", "value")})
    return shapes


def session_seconds(path: Path, threads: int) -> float:
    """Seconds of onnxruntime.InferenceSession(path) (ORT_ENABLE_ALL, `threads` intra-op
    threads, CPU provider; options made outside the timed call)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    gc.collect()
    t = time.perf_counter()
    ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return time.perf_counter() - t


def convert_seconds(path: Path, shapes: Mapping[str, Sequence[int]]) -> tuple[float, int]:
    """Seconds of converter.convert(path, input_shapes=shapes) and the operation count."""
    import converter

    gc.collect()
    t = time.perf_counter()
    result = converter.convert(str(path), input_shapes=shapes)
    seconds = time.perf_counter() - t
    return seconds, len(result.graph.operations)


def bench(name: str, path: Path, shapes: Mapping[str, Sequence[int]], repeat: int,
          threads: int) -> dict[str, Any]:
    """One untimed round, then `repeat` interleaved rounds of both; medians and ranges."""
    steps: dict[str, Callable[[], float]] = {
        "convert": lambda: convert_seconds(path, shapes)[0],
        "session": lambda: session_seconds(path, threads)}
    _, operations = convert_seconds(path, shapes)
    session_seconds(path, threads)
    times: dict[str, list[float]] = {"convert": [], "session": []}
    for i in range(repeat):
        for step in (("convert", "session") if i % 2 == 0 else ("session", "convert")):
            times[step].append(steps[step]())
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"model": name, "file_mb": round(path.stat().st_size / 2**20, 2),
            "convert_s": med["convert"], "session_s": med["session"],
            "convert_over_session": med["convert"] / med["session"],
            "convert_range_s": [min(times["convert"]), max(times["convert"])],
            "session_range_s": [min(times["session"]), max(times["session"])],
            "operations": operations, "repeat": repeat}


def profile(path: Path, shapes: Mapping[str, Sequence[int]], top: int = 25,
            rounds: int = 10) -> None:
    """Print the cProfile top of `rounds` more conversions (after the timed ones: imports
    and first-use caches excluded), by own time (tottime) and by cumulative time."""
    import cProfile
    import pstats

    import converter

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(rounds):
        converter.convert(str(path), input_shapes=shapes)
    prof.disable()
    for key in ("tottime", "cumulative"):
        pstats.Stats(prof).sort_stats(key).print_stats(top)


def print_rows(rows: Sequence[Mapping[str, Any]]) -> None:
    print(f"{'model':<10} {'MB':>7} {'convert ms':>10} {'(min-max)':>15} {'session ms':>10} "
          f"{'(min-max)':>15} {'convert/session':>15} {'ops':>6}")
    for r in rows:
        cr, sr = r["convert_range_s"], r["session_range_s"]
        print(f"{r['model']:<10} {r['file_mb']:>7.2f} {r['convert_s'] * 1e3:>10.1f} "
              f"{cr[0] * 1e3:>7.1f}-{cr[1] * 1e3:<7.1f} {r['session_s'] * 1e3:>10.1f} "
              f"{sr[0] * 1e3:>7.1f}-{sr[1] * 1e3:<7.1f} {r['convert_over_session']:>15.2f} "
              f"{r['operations']:>6}")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--size", nargs="+", choices=sorted(SIZES), default=list(DEFAULT_SIZES))
    p.add_argument("--repeat", type=int, default=9)
    p.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads")
    p.add_argument("--profile", action="store_true", help="cProfile 10 more conversions of each")
    p.add_argument("--quick", action="store_true", help="smoke run: tiny, 3 rounds")
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    if args.quick:
        args.size, args.repeat = ["tiny"], 3
    import onnxruntime

    import converter  # imports first, outside every timed call
    import op_mappings.onnx

    op_mappings.onnx.load_all()
    rows = []
    for name in args.size:
        hidden, layers = SIZES[name]
        path = llama_int4(hidden, layers)
        shapes = input_shapes(hidden, layers)
        rows.append(bench(name, path, shapes, args.repeat, args.threads))
        print(f"[{name}] convert {rows[-1]['convert_s'] * 1e3:.1f} ms, session "
              f"{rows[-1]['session_s'] * 1e3:.1f} ms", file=sys.stderr, flush=True)
        if args.profile:
            profile(path, shapes)
    print_rows(rows)
    if args.json:
        args.json.write_text(json.dumps({
            "rows": rows, "threads": args.threads, "graph_optimization": "ORT_ENABLE_ALL",
            "onnxruntime": onnxruntime.__version__, "python": platform.python_version(),
            "converter": getattr(converter, "__version__", None), "cpus": os.cpu_count()},
            indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
