"""Models with host steps (docs/host-steps.md) against onnxruntime on the original, in one
process: the converted pipeline (the WebNN graph on the onnxruntime backend, then the host
steps on onnx's reference evaluator with `converter.runtimes.host.fast_ops`) and
onnxruntime's CPU session of the source model, timed interleaved.

    python benchmarks/host_steps.py MODEL.onnx [MODEL.onnx ...] [--rounds 5] [--warmup 1]
        [--threads 1] [--seed 0] [--json OUT]

Per model: the median wall time of each contender over `--rounds` interleaved rounds (after
`--warmup` untimed ones), the graph's share of ours (the same session's graph alone), the
ratio ours / onnxruntime, the host-step count and whether the outputs agree (same shapes,
`interleaved_timing.matches`). Inputs are the converter's generated ones
(`converter.api.make_inputs`, `--seed`). The real-world suite's detector exports
(`models/make_realworld.py`), 1 thread, 2026-11-28: SSDlite320 ours 298 ms / onnxruntime
451 ms (0.66), Faster R-CNN 320 FPN 389 / 185 ms (2.11); docs/host-steps.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from interleaved_timing import matches, time_interleaved  # noqa: E402


def measure(path: str, rounds: int, warmup: int, threads: int, seed: int) -> dict[str, Any]:
    """One model's row (see the module docstring)."""
    import onnxruntime as ort

    from converter.api import convert, make_inputs

    result = convert(path)
    if result.host is None:
        raise SystemExit(f"{path}: converts without host steps; nothing to measure here")
    feeds = make_inputs(result.source, seed=seed)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    ours = result.compile("onnxruntime", threads=threads)
    graph_feeds = ours._feeds(feeds)
    runners = {
        "ours": lambda: list(ours.run(feeds).values()),
        "onnxruntime": lambda: session.run(None, feeds),
        "graph": lambda: list(ours._run(graph_feeds).values()),
    }
    wall, _cpu = time_interleaved(runners, warmup, rounds)
    got = ours.run(feeds)
    want = dict(zip(names, session.run(None, feeds), strict=True))
    same_shapes = all(got[n].shape == want[n].shape for n in names)
    agree = same_shapes and matches([got[n] for n in names], [want[n] for n in names])[0]
    return {"model": path, "host_steps": len(result.host.nodes),
            "ops": len(result.graph.operations), "threads": threads, "rounds": rounds,
            "ours_ms": wall["ours"] * 1e3, "onnxruntime_ms": wall["onnxruntime"] * 1e3,
            "graph_ms": wall["graph"] * 1e3,
            "ratio": wall["ours"] / wall["onnxruntime"], "outputs_agree": bool(agree)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    rows = [measure(m, args.rounds, args.warmup, args.threads, args.seed) for m in args.models]
    for r in rows:
        print(f"{Path(r['model']).name}: ours {r['ours_ms']:.1f} ms (graph {r['graph_ms']:.1f} "
              f"ms, {r['host_steps']} host steps), onnxruntime {r['onnxruntime_ms']:.1f} ms, "
              f"ours/onnxruntime {r['ratio']:.2f}, outputs "
              f"{'agree' if r['outputs_agree'] else 'DIFFER'}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0 if all(r["outputs_agree"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
