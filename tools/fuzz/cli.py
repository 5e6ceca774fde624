"""Command line of the fuzzer (run from the repository root):

    python -m tools.fuzz run --seed 1 --count 2000 --jobs 2 --out /tmp/fuzz_out \
        [--kinds onnx,tflite,webnn,webnn-json,manifest,weights,safetensors] [--timeout 20]
        [--max-memory 4GiB] [--mode fork|subprocess] [--minimize-seconds 300]
    python -m tools.fuzz repro /tmp/fuzz_out/cases/internal/onnx-00042 [--original]
        [--mode subprocess|fork] [--keep DIR]
    python -m tools.fuzz seeds DIR [--check]

`run` exits 1 when some run was not clean (see tools/fuzz/classify.py), 0 otherwise;
`repro` exits 0 when the saved class is reproduced, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    from tools.fuzz.mutators import KINDS

    p = argparse.ArgumentParser(prog="python -m tools.fuzz",
                                description="Fuzz webnn-convert with mutants of its own "
                                            "models and exported graphs.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a campaign")
    r.add_argument("--seed", type=int, default=0, help="campaign seed (mutant i is the same "
                   "for a given seed whatever --jobs)")
    r.add_argument("--count", type=int, default=1000, help="number of mutants")
    r.add_argument("--jobs", type=int, default=2, help="runs at once")
    r.add_argument("--out", type=Path, required=True, help="folder for summary + reproducers")
    r.add_argument("--kinds", default=",".join(KINDS),
                   help=f"comma-separated kinds to mutate (default: all: {','.join(KINDS)})")
    r.add_argument("--timeout", type=float, default=20.0, help="wall-time limit per run (s)")
    r.add_argument("--max-memory", type=_size, default=None, metavar="SIZE",
                   help="address-space cap of each child (RLIMIT_AS), e.g. 4GiB (default); "
                        "a run that ends in MemoryError under it is a 'memory' finding")
    r.add_argument("--memory-gib", type=float, default=4.0, help=argparse.SUPPRESS)
    r.add_argument("--mode", choices=["fork", "subprocess"], default="fork",
                   help="fork a warm parent (fast) or start a fresh interpreter per run")
    r.add_argument("--minimize-seconds", type=float, default=300.0,
                   help="total time for minimising findings (0: none)")
    r.add_argument("--quiet", action="store_true", help="no progress on stderr")
    q = sub.add_parser("repro", help="run a saved reproducer again")
    q.add_argument("case", type=Path)
    q.add_argument("--original", action="store_true", help="not the minimised form")
    q.add_argument("--mode", choices=["fork", "subprocess"], default="subprocess")
    q.add_argument("--timeout", type=float, default=20.0)
    q.add_argument("--max-memory", type=_size, default=None, metavar="SIZE")
    q.add_argument("--memory-gib", type=float, default=4.0, help=argparse.SUPPRESS)
    q.add_argument("--keep", type=Path, default=None,
                   help="lay the case out in this (new) folder and keep it")
    s = sub.add_parser("seeds", help="write the seed corpus to a folder")
    s.add_argument("folder", type=Path)
    s.add_argument("--check", action="store_true",
                   help="run each seed's command unmutated and print its class")
    return p


def _size(text: str) -> int:
    """A byte size ("4GiB", "512MiB", "4294967296") for --max-memory."""
    from converter.core.budgets import parse_size

    try:
        return parse_size(text, "--max-memory")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _memory(args: argparse.Namespace) -> int:
    """--max-memory, else the older --memory-gib (4 GiB by default)."""
    if args.max_memory is not None:
        return int(args.max_memory)
    return int(args.memory_gib * (1 << 30))


def _kinds(text: str) -> tuple[str, ...]:
    from tools.fuzz.mutators import KINDS

    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise SystemExit(f"unknown kind(s) {', '.join(bad)}; kinds: {', '.join(KINDS)}")
    return kinds


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from tools.fuzz.runner import make_runner

    if args.command == "run":
        from tools.fuzz.campaign import Campaign

        runner = make_runner(args.mode, args.timeout, _memory(args))
        campaign = Campaign(args.seed, args.count, args.out, runner, jobs=args.jobs,
                            kinds=_kinds(args.kinds), minimize_seconds=args.minimize_seconds,
                            progress=not args.quiet)
        campaign.run()
        if campaign.interrupted:
            return 130
        return 1 if campaign.findings else 0
    if args.command == "repro":
        from tools.fuzz.campaign import repro

        runner = make_runner(args.mode, args.timeout, _memory(args))
        verdict, result, case = repro(args.case, runner, original=args.original,
                                      keep=args.keep)
        saved_path = args.case / "verdict.json"
        saved = json.loads(saved_path.read_text())["class"] if saved_path.is_file() else None
        print(f"command: webnn-convert {' '.join(case.argv)}")
        print(f"mutators: {', '.join(case.mutators)}")
        print(f"exit code: {result.exit_code}, signal: {result.signal}, "
              f"timed out: {result.timed_out}, {result.seconds:.2f}s")
        print("--- stdout ---\n" + result.stdout.rstrip()[-4000:])
        print("--- stderr ---\n" + result.stderr.rstrip()[-8000:])
        print(f"class: {verdict.cls}  {verdict.detail}")
        if verdict.site:
            print(f"site: {verdict.site}")
        if saved is not None:
            print(f"saved class: {saved} ({'reproduced' if saved == verdict.cls else 'NOT reproduced'})")
        return 0 if saved in (None, verdict.cls) else 1
    if args.command == "seeds":
        return _seeds(args.folder, args.check)
    return 2  # pragma: no cover


def _seeds(folder: Path, check: bool) -> int:
    import shutil

    from tools.fuzz import seeds
    from tools.fuzz.campaign import judge
    from tools.fuzz.case import Case

    corpus = seeds.corpus()
    bad = 0
    runner = None
    for seed in corpus:
        dest = folder / seed.name
        dest.mkdir(parents=True, exist_ok=True)
        for name, data in {**seed.files, **seed.aux}.items():
            (dest / name).write_bytes(data)
        line = f"{seed.name}: {', '.join(f'{k}={v}' for k, v in seed.kinds.items())}"
        if check:
            from tools.fuzz.runner import ForkRunner

            runner = runner or ForkRunner()
            main_file = seed.kinds.get("webnn") or seed.kinds.get("webnn-json") or \
                next(iter(seed.kinds.values()))
            argv = ["run", f"m/{main_file}", "--inputs", "inputs.npz", "-o", "out.npz"] \
                if seed.is_graph else \
                ["convert", f"m/{main_file}", "-o", "out", "--format", "all"] + seed.options
            case = Case(0, "seed", seed.name, main_file, argv, dict(seed.files), aux=seed.aux)
            run_dir = folder / f".check-{seed.name}"
            shutil.rmtree(run_dir, ignore_errors=True)
            case.materialize(run_dir)
            result = runner.run(argv, run_dir)
            verdict = judge(case, run_dir, result, shutil.which("node"))
            shutil.rmtree(run_dir, ignore_errors=True)
            line += f"  -> {verdict.cls} {verdict.detail[:100]}"
            bad += verdict.cls != "ok"
        print(line)
    print(f"{len(corpus)} seeds written to {folder}", file=sys.stderr)
    return 1 if bad else 0
