"""A campaign: generate mutants from the seed corpus, run each through the real CLI,
classify the outcomes, save and minimise reproducers, summarise.

Output folder (`--out`):

    summary.json, summary.txt      counts by class and kind, findings, internal-error sites
    runs.jsonl                     one line per run: kind, seed, argv, mutators, class, detail
    cases/<class>/<kind>-<index>/  one reproducer per non-clean run: case.json (argv, seed,
                                   mutators), files/ (the model folder), aux/, stdout.txt,
                                   stderr.txt, verdict.json, command.txt; min/ the minimised
                                   case (first finding of each signature, within the budget)

`python -m tools.fuzz repro cases/<class>/<kind>-<index>` runs one again.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.fuzz.case import CANARY_NAME, MODEL_DIR, Case, canary_content, case_rng
from tools.fuzz.classify import (
    CLASSES,
    NOT_CLEAN,
    Evidence,
    Verdict,
    classify,
    classify_load,
    site_of,
)
from tools.fuzz.runner import LOAD_CHECK, Pool, Runner, RunResult

CAPTURE_NAMES = {"stdout.txt", "stderr.txt"}
OUTPUTS = {"out", "out.npz"}
MAX_SCAN = 64 << 20


# -- evidence -----------------------------------------------------------------------------------


def _canary_patterns() -> list[bytes]:
    data = canary_content()
    return [data[i:i + 16] for i in range(0, 1024, 16)] + \
        [data[i:i + 16] for i in range(4096, len(data), 4096)]


PATTERNS: list[bytes] = []


def _files_under(path: Path) -> list[Path]:
    if path.is_symlink() or not path.exists():
        return []
    if path.is_file():
        return [path]
    return [p for p in path.rglob("*") if p.is_file() and not p.is_symlink()]


def gather(case: Case, run_dir: Path, result: RunResult, node: str | None) -> Evidence:
    """Canary reads, writes outside the output paths, leftovers and JavaScript errors."""
    if not PATTERNS:
        PATTERNS.extend(_canary_patterns())
    ev = Evidence()
    canary = run_dir / CANARY_NAME
    try:
        st = os.stat(canary)
        if st.st_atime_ns != 0:
            ev.canary_read = f"{CANARY_NAME} (outside the model folder) was read: its " \
                             "access time changed"
    except FileNotFoundError:
        ev.canary_read = f"{CANARY_NAME} (outside the model folder) was removed"
    scan = [p for name in OUTPUTS for p in _files_under(run_dir / name)]
    for path in scan:
        if path.stat().st_size > MAX_SCAN:
            continue
        blob = path.read_bytes()
        if any(p in blob for p in PATTERNS):
            ev.canary_read = f"the canary's bytes are in {path.relative_to(run_dir)}"
            break
    if not ev.canary_read and any(p.decode("latin-1") in result.stdout for p in PATTERNS[:4]):
        ev.canary_read = "the canary's bytes are on stdout"
    expected = {CANARY_NAME, MODEL_DIR, *CAPTURE_NAMES, *OUTPUTS, *case.aux}
    for entry in sorted(os.listdir(run_dir)):
        if entry in expected or entry.endswith("-debug"):
            continue
        if entry.startswith((".out.export-", ".out.npz.")):
            ev.leftovers.append(entry)
        else:
            ev.outside_writes.append(entry)
    tops = {n.split("/")[0] for n in [*case.files, *case.links, *case.fifos]}
    for entry in sorted(os.listdir(run_dir / MODEL_DIR)):
        if entry not in tops:
            ev.outside_writes.append(f"{MODEL_DIR}/{entry}")
    failed = result.exit_code != 0
    if failed and case.command == "convert" and (run_dir / "out").exists():
        ev.leftovers.append("out/")
    if failed and case.command == "run" and (run_dir / "out.npz").exists():
        ev.leftovers.append("out.npz")
    if not failed and case.command == "convert":
        ev.js_errors = check_js(run_dir / "out", node)
    return ev


def records_atime(folder: Path) -> bool:
    probe = folder / "atime-probe"
    probe.write_bytes(b"x")
    os.utime(probe, (0, 0))
    probe.read_bytes()
    ok = os.stat(probe).st_atime_ns != 0
    probe.unlink()
    return ok


def check_js(folder: Path, node: str | None) -> list[str]:
    """`node --check` of every generated .js module (when node is installed), and generated .html
    pages that contain a name breaking out of a <script> block (`HTML_MARK`)."""
    import subprocess

    from tools.fuzz.mutators.common import HTML_MARK

    errors = []
    for page in sorted(folder.glob("*.html")) if folder.is_dir() else []:
        if HTML_MARK.encode() in page.read_bytes():
            errors.append(f"{page.name}: a name is written into the page unescaped "
                          f"({HTML_MARK!r})")
    if node is None:
        return errors
    for js in sorted(folder.glob("*.js")) if folder.is_dir() else []:
        try:  # an ES module: `node --check x.js` would not check it (node 20 guesses CJS)
            with open(js, "rb") as src:
                p = subprocess.run([node, "--input-type=module", "--check"], stdin=src,
                                   capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired:
            errors.append(f"{js.name}: node --check timed out")
            continue
        if p.returncode != 0:
            msg = next((line for line in p.stderr.splitlines() if "Error" in line),
                       p.stderr.strip()[:200])
            errors.append(f"{js.name}: {msg}")
    return errors


def judge(case: Case, run_dir: Path, result: RunResult, node: str | None) -> Verdict:
    ev = gather(case, run_dir, result, node)
    return classify(case.command, result.exit_code, result.signal, result.timed_out,
                    result.stdout, result.stderr, ev)


def exported_graph(case: Case, run_dir: Path) -> str | None:
    """The .webnn (or .webnn.json) graph a successful convert wrote, relative to the run."""
    if case.command != "convert" or not (run_dir / "out").is_dir():
        return None
    found = sorted((run_dir / "out").glob("*.webnn")) or \
        sorted((run_dir / "out").glob("*.webnn.json"))
    return f"out/{found[0].name}" if found else None


def debug_argv(argv: list[str]) -> list[str]:
    return argv[:1] + ["--debug"] + argv[1:]


# -- the campaign ---------------------------------------------------------------------------


@dataclass
class Finding:
    case: Case
    verdict: Verdict
    result: RunResult
    folder: Path | None = None
    minimized: bool = False


@dataclass
class Campaign:
    seed: int
    count: int
    out: Path
    runner: Runner
    jobs: int = 2
    kinds: tuple[str, ...] = ()
    minimize_seconds: float = 300.0
    per_case_seconds: float = 45.0
    progress: bool = True
    log_all: bool = True
    counts: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0
    done: int = 0
    interrupted: bool = False

    def log(self, message: str) -> None:
        if self.progress:
            print(f"[fuzz] {message}", file=sys.stderr, flush=True)

    def run(self) -> None:
        from tools.fuzz import mutators, seeds

        start = time.monotonic()
        kinds = self.kinds or mutators.KINDS
        corpus = seeds.corpus()
        by_kind = {k: [s for s in corpus if k in s.kinds] for k in kinds}
        by_kind = {k: v for k, v in by_kind.items() if v}
        if not by_kind:
            raise SystemExit(f"no seeds for kinds {', '.join(kinds)}")
        self.log(f"{len(corpus)} seeds; kinds {', '.join(by_kind)}; {self.count} mutants, "
                 f"{self.jobs} jobs, {self.runner.mode} mode, timeout {self.runner.timeout}s, "
                 f"address space {self.runner.memory / (1 << 30):g} GiB")
        names = sorted(by_kind)
        weights = [mutators.WEIGHTS.get(k, 1) for k in names]
        node = shutil.which("node")
        prepare_out(self.out)
        work = Path(tempfile.mkdtemp(prefix="wf-", dir="/tmp" if Path("/tmp").is_dir()
                                     else None))
        if not records_atime(work):
            self.log(f"warning: {work} does not record access times: canary reads are only "
                     "seen when its bytes reach an output")
        if node is None:
            self.log("warning: node is not installed: generated JavaScript is not checked")
        pool = Pool(self.runner, self.jobs)
        next_index = 0

        def feed() -> None:
            nonlocal next_index
            while len(pool.queue) < self.jobs and next_index < self.count:
                rng = case_rng(self.seed, next_index)
                kind = rng.choices(names, weights)[0]
                seed = rng.choice(by_kind[kind])
                case = mutators.make_case(next_index, seed, kind, rng)
                run_dir = work / str(next_index)
                case.materialize(run_dir)
                pool.submit(("case", case, run_dir, None), case.argv, run_dir)
                next_index += 1

        done = 0
        try:
            feed()
            for key, result in pool.results():
                what, case, run_dir, first = key
                if what == "case":
                    verdict = judge(case, run_dir, result, node)
                    graph = exported_graph(case, run_dir) if verdict.cls == "ok" else None
                    if graph is not None:
                        pool.submit(("load", case, run_dir, (verdict, result, run_dir)),
                                    [LOAD_CHECK, graph], run_dir, front=True)
                        feed()
                        continue
                    if verdict.cls in ("internal", "memory") and not verdict.site:
                        dbg = run_dir.with_name(run_dir.name + "-debug")
                        case.materialize(dbg)
                        pool.submit(("debug", case, dbg, (verdict, result, run_dir)),
                                    debug_argv(case.argv), dbg, front=True)
                        feed()
                        continue
                elif what == "load":  # the round trip of an exported graph
                    verdict, first_result, _ = first
                    verdict = classify_load(result.exit_code, result.signal, result.timed_out,
                                            result.stderr) or verdict
                    if verdict.cls == "roundtrip":
                        first_result.stderr += "\n--- loading the exported graph ---\n" + \
                            result.stderr
                    result = first_result
                else:  # the --debug rerun of an internal error: its traceback's site
                    verdict, first_result, first_dir = first
                    verdict.site = site_of(result.stderr)
                    shutil.rmtree(run_dir, ignore_errors=True)
                    run_dir, result = first_dir, first_result
                self.record(case, verdict, result)
                shutil.rmtree(run_dir, ignore_errors=True)
                done += 1
                if done % 100 == 0 or done == self.count:
                    self.log(f"{done}/{self.count} " + ", ".join(
                        f"{c} {sum(self.counts[c].values())}" for c in CLASSES
                        if self.counts[c]) + f" ({time.monotonic() - start:.0f}s)")
                feed()
            self.minimize_all(work, node)
        except KeyboardInterrupt:
            self.interrupted = True
            self.log(f"interrupted after {done} runs: the summary covers those")
        finally:
            pool.kill_all()
            shutil.rmtree(work, ignore_errors=True)
        self.seconds = time.monotonic() - start
        self.done = done
        self.write_summary()

    def record(self, case: Case, verdict: Verdict, result: RunResult) -> None:
        self.counts[verdict.cls][case.kind] += 1
        if self.log_all:
            with open(self.out / "runs.jsonl", "a") as f:
                f.write(json.dumps({"index": case.index, "kind": case.kind, "seed": case.seed,
                                    "argv": case.argv, "mutators": case.mutators,
                                    "class": verdict.cls, "detail": verdict.detail,
                                    "site": verdict.site, "exit_code": result.exit_code,
                                    "seconds": round(result.seconds, 2)}) + "\n")
        if verdict.cls in NOT_CLEAN:
            finding = Finding(case, verdict, result)
            finding.folder = save_reproducer(self.out, case, verdict, result)
            self.findings.append(finding)

    def minimize_all(self, work: Path, node: str | None) -> None:
        from tools.fuzz.minimize import minimize

        deadline = time.monotonic() + self.minimize_seconds
        seen: set[str] = set()
        firsts = []
        for f in sorted(self.findings, key=lambda f: f.case.index):
            sig = f.verdict.signature(f.case.kind)
            if sig not in seen:
                seen.add(sig)
                firsts.append(f)
        counter = [0]

        def check(trial: Case) -> Verdict | None:
            counter[0] += 1
            run_dir = work / f"min-{counter[0]}"
            trial.materialize(run_dir)
            try:
                argv = trial.argv
                result = self.runner.run(argv, run_dir)
                verdict = judge(trial, run_dir, result, node)
                graph = exported_graph(trial, run_dir) if verdict.cls == "ok" else None
                if graph is not None:
                    loaded = self.runner.run([LOAD_CHECK, graph], run_dir)
                    verdict = classify_load(loaded.exit_code, loaded.signal, loaded.timed_out,
                                            loaded.stderr) or verdict
                if verdict.cls in ("internal", "memory"):
                    shutil.rmtree(run_dir, ignore_errors=True)
                    trial.materialize(run_dir)
                    verdict.site = site_of(self.runner.run(debug_argv(argv), run_dir).stderr)
                return verdict
            finally:
                shutil.rmtree(run_dir, ignore_errors=True)

        if firsts:
            self.log(f"minimising {len(firsts)} distinct findings "
                     f"(budget {self.minimize_seconds:.0f}s)")
        for f in firsts:
            left = deadline - time.monotonic()
            if left <= 1 or f.folder is None:
                break
            small = minimize(f.case, f.verdict, check, seconds=min(left, self.per_case_seconds))
            if small is not f.case:
                small.save(f.folder / "min")
                f.minimized = True

    # -- summary ------------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        kinds = sorted({k for c in self.counts.values() for k in c})
        sites: dict[str, dict[str, Any]] = {}
        for f in self.findings:
            if f.verdict.cls in ("internal", "memory", "crash", "hang") and f.verdict.site:
                entry = sites.setdefault(f.verdict.site, {"class": f.verdict.cls, "count": 0,
                                                          "example": str(f.folder),
                                                          "message": f.verdict.detail})
                entry["count"] += 1
        signatures: dict[str, dict[str, Any]] = {}
        for f in self.findings:
            sig = f.verdict.signature(f.case.kind)
            entry = signatures.setdefault(sig, {"class": f.verdict.cls, "kind": f.case.kind,
                                                "count": 0, "detail": f.verdict.detail,
                                                "site": f.verdict.site,
                                                "example": str(f.folder),
                                                "minimized": f.minimized,
                                                "mutators": f.case.mutators})
            entry["count"] += 1
        return {
            "seed": self.seed, "count": self.count, "done": self.done,
            "interrupted": self.interrupted, "jobs": self.jobs,
            "mode": self.runner.mode, "timeout": self.runner.timeout,
            "max_memory": self.runner.memory,
            "seconds": round(self.seconds, 1), "kinds": kinds,
            "counts": {c: dict(self.counts[c]) for c in CLASSES if self.counts[c]},
            "not_clean": sum(sum(self.counts[c].values()) for c in NOT_CLEAN),
            "sites": dict(sorted(sites.items(), key=lambda kv: -kv[1]["count"])),
            "signatures": sorted(signatures.values(), key=lambda e: (e["class"], -e["count"])),
            "findings": [{"class": f.verdict.cls, "kind": f.case.kind, "index": f.case.index,
                          "seed": f.case.seed, "command": f.case.command,
                          "mutators": f.case.mutators, "detail": f.verdict.detail,
                          "site": f.verdict.site, "folder": str(f.folder)}
                         for f in self.findings],
        }

    def write_summary(self) -> None:
        data = self.summary()
        (self.out / "summary.json").write_text(json.dumps(data, indent=2) + "\n")
        text = render(data)
        (self.out / "summary.txt").write_text(text)
        print(text, end="")


def render(data: dict[str, Any]) -> str:
    counts: dict[str, dict[str, int]] = data["counts"]
    kinds: list[str] = data["kinds"]
    head = ["class", *kinds, "total"]
    rows = [head]
    for cls in CLASSES:
        row = counts.get(cls, {})
        if row:
            rows.append([cls, *(str(row.get(k, 0)) for k in kinds), str(sum(row.values()))])
    totals = [sum(counts.get(c, {}).get(k, 0) for c in counts) for k in kinds]
    rows.append(["total", *map(str, totals), str(sum(totals))])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = [f"webnn-convert fuzz campaign: seed {data['seed']}, {data['count']} mutants"
             + (f" (interrupted after {data['done']})" if data.get("interrupted") else "")
             + f", {data['jobs']} jobs ({data['mode']}), {data['seconds']}s"]
    for r in rows:
        lines.append("  ".join(c.rjust(w) if i else c.ljust(w)
                               for i, (c, w) in enumerate(zip(r, widths, strict=True))))
    lines.append(f"not clean: {data['not_clean']}")
    if data["sites"]:
        lines.append("sites (deepest project frame) of internal errors, memory, crashes, "
                     "hangs:")
        for site, e in data["sites"].items():
            lines.append(f"  {e['count']:4d}  {e['class']:<8} {site}  {e['message'][:90]}")
    if data["signatures"]:
        lines.append("distinct findings (class | kind | count | example | detail):")
        for e in data["signatures"]:
            lines.append(f"  {e['class']} | {e['kind']} | {e['count']} | {e['example']} | "
                         f"{(e['site'] + ' ' if e['site'] else '')}{e['detail'][:120]}")
    return "\n".join(lines) + "\n"


# -- reproducers -----------------------------------------------------------------------------


def prepare_out(out: Path) -> None:
    """Create `out`, or empty the cases of an earlier campaign there; refuse other folders."""
    if out.exists():
        if not out.is_dir():
            raise SystemExit(f"{out}: not a folder")
        entries = set(os.listdir(out))
        if entries and "summary.json" not in entries and entries != {"cases"}:
            raise SystemExit(f"{out}: not empty and not a fuzz output folder")
        shutil.rmtree(out / "cases", ignore_errors=True)
        (out / "runs.jsonl").unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)


def save_reproducer(out: Path, case: Case, verdict: Verdict, result: RunResult) -> Path:
    folder = out / "cases" / verdict.cls / f"{case.kind}-{case.index:05d}"
    if folder.exists():
        shutil.rmtree(folder)
    case.save(folder)
    (folder / "stdout.txt").write_text(result.stdout)
    (folder / "stderr.txt").write_text(result.stderr)
    (folder / "verdict.json").write_text(json.dumps({
        "class": verdict.cls, "detail": verdict.detail, "site": verdict.site,
        "signature": verdict.signature(case.kind), "exit_code": result.exit_code,
        "signal": result.signal, "timed_out": result.timed_out,
        "seconds": round(result.seconds, 2), "maxrss_kb": result.maxrss_kb}, indent=2) + "\n")
    (folder / "command.txt").write_text(
        "# lay the case out and run it: python -m tools.fuzz repro " + str(folder) + "\n"
        "# (the model folder is m/, the canary ../canary.bin from it; in the run folder:)\n"
        "webnn-convert " + shlex.join(case.argv) + "\n")
    return folder


def repro(folder: Path, runner: Runner, original: bool = False, keep: Path | None = None
          ) -> tuple[Verdict, RunResult, Case]:
    """Run a saved case again (its minimised form when there is one)."""
    src = folder if original or not (folder / "min" / "case.json").is_file() else folder / "min"
    case = Case.load(src)
    run_dir = keep if keep is not None else Path(tempfile.mkdtemp(prefix="wf-repro-"))
    try:
        case.materialize(run_dir)
        result = runner.run(case.argv, run_dir)
        verdict = judge(case, run_dir, result, shutil.which("node"))
        graph = exported_graph(case, run_dir) if verdict.cls == "ok" else None
        if graph is not None:
            loaded = runner.run([LOAD_CHECK, graph], run_dir)
            verdict = classify_load(loaded.exit_code, loaded.signal, loaded.timed_out,
                                    loaded.stderr) or verdict
            if verdict.cls == "roundtrip":
                result.stderr += "\n--- loading the exported graph ---\n" + loaded.stderr
        if verdict.cls in ("internal", "memory"):
            dbg = run_dir.with_name(run_dir.name + "-debug")
            case.materialize(dbg)
            debug = runner.run(debug_argv(case.argv), dbg)
            verdict.site = site_of(debug.stderr)
            result.stderr += "\n--- with --debug ---\n" + debug.stderr
            shutil.rmtree(dbg, ignore_errors=True)
    finally:
        if keep is None:
            shutil.rmtree(run_dir, ignore_errors=True)
    return verdict, result, case
