"""Converting and validating every model of a manifest, in parallel processes.

`run_entry` handles one model in the current process and never raises: the outcome is a
`ZooResult` with status "pass", "fail" (an output outside tolerance, against the original
framework or the entry's stored reference output), "error" (conversion or run failed;
`reason_code` from the ConversionError when there is one, "model_changed" for a sha256
mismatch) or "skipped" (the model file is not available: `reason_code` "not_available";
or the caller chose not to run it, e.g. a slow entry: "not_run"; `message` says why in both
cases; a pending entry (`read_manifest(..., generate=False)`) is generated first, its
generator's failure is an "error" with reason_code "generator_failed").
The model, its inputs and stored outputs come from `converter.zoo.sources` (random weights,
input recipes).

`run_zoo` runs entries on one of three engines, calling `on_done(name)` as each one
finishes, and keeps manifest order: a `dask.distributed` cluster (`converter.zoo.cluster`:
a scheduler's address or client, or a LocalCluster of `jobs` workers when Dask is installed,
the `cluster` extra), a `ProcessPoolExecutor` of spawned workers (the plain install, jobs >
1), or this process (jobs = 1). Workers run onnxruntime / backends with one thread each. An
interruption (KeyboardInterrupt, SIGTERM turned into SystemExit as the CLI does) cancels the
entries not started and stops the workers (pool workers remove their temporary files).
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .manifest import ZooEntry, materialize
from .sources import (
    ModelChanged,
    check_digest,
    convert_options,
    entry_inputs,
    load_model,
    stored_outputs,
)

STATUSES = ("pass", "fail", "error", "skipped")


@dataclass(frozen=True)
class Budget:
    """What one model may use when it runs isolated (`converter.zoo.isolation`): wall-clock
    `seconds` and address-space `memory` bytes (None or 0: unlimited)."""

    seconds: float | None = None
    memory: int | None = None

    @property
    def limited(self) -> bool:
        return bool(self.seconds) or bool(self.memory)


@dataclass(frozen=True)
class ZooResult:
    """The outcome of one model (plain data, picklable)."""

    name: str
    status: str
    format: str = ""
    path: str | None = None
    source: str = ""
    licence: str = ""
    message: str = ""
    reason_code: str = ""
    rtol: float = 0.0
    atol: float = 0.0
    max_abs: float | None = None
    max_rel: float | None = None
    outputs: tuple[dict[str, Any], ...] = ()
    divergence: dict[str, Any] | None = None
    timings: dict[str, float] = field(default_factory=dict)
    conversion: dict[str, int] = field(default_factory=dict)
    operations: int = 0
    notes: tuple[str, ...] = ()
    unsupported: tuple[str, ...] = ()
    """With a target: what the converted graph uses outside its limits
    (`converter.targets.check.summary`); any makes the row fail."""
    profiles: dict[str, str] = field(default_factory=dict)
    """Per built-in profile run (`run_entry(profiles=...)`): its verdict (`profile_verdict`)."""
    attempts: int = 1
    """How many times an engine started the model (Dask: a worker lost while running it
    makes the scheduler start it again elsewhere); more than 1 is said in the reports."""

    @property
    def total_seconds(self) -> float:
        return float(self.timings.get("total", 0.0))

    def to_dict(self) -> dict[str, Any]:
        from ..validate.compare import json_number

        return {"name": self.name, "status": self.status, "format": self.format,
                "path": self.path, "source": self.source, "licence": self.licence,
                "message": self.message, "reason_code": self.reason_code,
                "rtol": self.rtol, "atol": self.atol,
                "max_abs": json_number(self.max_abs) if self.max_abs is not None else None,
                "max_rel": json_number(self.max_rel) if self.max_rel is not None else None,
                "outputs": list(self.outputs), "divergence": self.divergence,
                "timings": {k: round(v, 6) for k, v in self.timings.items()},
                "conversion": dict(self.conversion), "operations": self.operations,
                "notes": list(self.notes),
                **({"unsupported": list(self.unsupported)} if self.unsupported else {}),
                **({"profiles": dict(self.profiles)} if self.profiles else {}),
                **({"attempts": self.attempts} if self.attempts != 1 else {})}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ZooResult:
        """The result `to_dict` gave (a report.json row)."""
        def number(v: Any) -> float | None:
            return None if v is None else float(v)

        return cls(name=str(d["name"]), status=str(d["status"]), format=str(d.get("format", "")),
                   path=d.get("path"), source=str(d.get("source", "")),
                   licence=str(d.get("licence", "")), message=str(d.get("message", "")),
                   reason_code=str(d.get("reason_code", "")), rtol=float(d.get("rtol", 0.0)),
                   atol=float(d.get("atol", 0.0)), max_abs=number(d.get("max_abs")),
                   max_rel=number(d.get("max_rel")),
                   outputs=tuple(dict(o) for o in d.get("outputs", ())),
                   divergence=d.get("divergence"),
                   timings={k: float(v) for k, v in dict(d.get("timings", {})).items()},
                   conversion={k: int(v) for k, v in dict(d.get("conversion", {})).items()},
                   operations=int(d.get("operations", 0)), notes=tuple(d.get("notes", ())),
                   unsupported=tuple(d.get("unsupported", ())),
                   profiles=dict(d.get("profiles", {})), attempts=int(d.get("attempts", 1)))

    def retry_text(self) -> str:
        """'started N times (a worker running it was lost)' when retried, else ''."""
        if self.attempts <= 1:
            return ""
        return f"started {self.attempts} times (a worker running it was lost)"


def profile_verdict(r: ZooResult) -> str:
    """One profile column's cell: pass, fail, error, skipped, or `unsupported (op role
    dtype, ...)` when the graph uses what the profile lacks."""
    if r.unsupported:
        return f"unsupported ({', '.join(r.unsupported)})"
    return r.status


@dataclass(frozen=True)
class ZooReport:
    """Results of a zoo run, in manifest order."""

    results: tuple[ZooResult, ...]
    backend: str
    device: str
    jobs: int
    started: str
    seconds: float
    profiles: tuple[str, ...] = ()
    """The profiles each row was also run under (a report column each)."""
    engine: str = ""
    """What ran the models: "in-process", "process pool", "dask LocalCluster" or
    "dask <scheduler address>"; merged shards: "merged"."""
    shard: str = ""
    """"K/N" for one shard of a run (`converter.zoo.shards`), else ""."""
    order: tuple[str, ...] = ()
    """A shard's report: the names of every model of the whole run, in manifest order
    (what `merge` orders the merged rows by); () otherwise."""

    def counts(self) -> dict[str, int]:
        return {s: sum(r.status == s for r in self.results) for s in STATUSES}

    @property
    def passed(self) -> bool:
        return all(r.status in ("pass", "skipped")
                   and all(v in ("pass", "skipped") for v in r.profiles.values())
                   for r in self.results)

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "device": self.device, "jobs": self.jobs,
                "started": self.started, "seconds": round(self.seconds, 3),
                "summary": {"total": len(self.results), **self.counts()},
                **({"profiles": list(self.profiles)} if self.profiles else {}),
                **({"engine": self.engine} if self.engine else {}),
                **({"shard": self.shard, "order": list(self.order)} if self.shard else {}),
                "models": [r.to_dict() for r in self.results]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ZooReport:
        """The report `to_dict` gave (a report.json)."""
        return cls(results=tuple(ZooResult.from_dict(m) for m in d.get("models", ())),
                   backend=str(d.get("backend", "")), device=str(d.get("device", "")),
                   jobs=int(d.get("jobs", 1)), started=str(d.get("started", "")),
                   seconds=float(d.get("seconds", 0.0)),
                   profiles=tuple(d.get("profiles", ())), engine=str(d.get("engine", "")),
                   shard=str(d.get("shard", "")), order=tuple(d.get("order", ())))

    def to_text(self) -> str:
        width = max((len(r.name) for r in self.results), default=4)
        lines = []
        for r in self.results:
            err = f"max abs {r.max_abs:.3g}" if r.max_abs is not None else ""
            detail = r.message.splitlines()[0] if r.message else ""
            if r.divergence:
                detail = (f"first diverging node {r.divergence.get('op_type')} "
                          f"{r.divergence.get('node')!r}")
            if r.attempts > 1:
                detail = "; ".join(filter(None, [detail, r.retry_text()]))
            lines.append(f"{r.name:<{width}}  {r.status.upper():<7} {err:<17} "
                         f"{r.total_seconds:7.2f}s  {detail}".rstrip())
            lines += [f"{'':<{width}}  {p}: {r.profiles[p]}" for p in self.profiles
                      if p in r.profiles]
        c = self.counts()
        lines.append(f"{len(self.results)} models: {c['pass']} pass, {c['fail']} fail, "
                     f"{c['error']} error, {c['skipped']} skipped ({self.seconds:.1f}s, "
                     f"{self.jobs} job(s), backend {self.backend} on {self.device})")
        return "\n".join(lines)


def run_entry(entry: ZooEntry, backend: str = "reference", device: str = "cpu",
              threads: int = 0, debug: bool = False, precision: str = "float32",
              target: str | None = None, profiles: Sequence[str] = ()) -> ZooResult:
    """Convert and validate one entry; never raises (see the module docstring). With
    `precision="float16"` (`convert(precision=...)`) the entry's tolerances, sized for
    float32, are widened to at least the float16 defaults (`validate.default_tolerance`).
    `target` converts and validates for that target (`validate(target=...)`: what the graph
    uses outside its limits is `ZooResult.unsupported` and fails the row); each of
    `profiles` runs the entry once more with that target, its verdict in
    `ZooResult.profiles`."""
    row = _run_entry(entry, backend, device, threads, debug, precision, target)
    if not profiles or row.status == "skipped":
        return row
    import dataclasses

    verdicts = {p: profile_verdict(_run_entry(entry, backend, device, threads, debug,
                                              precision, p)) for p in profiles}
    return dataclasses.replace(row, profiles=verdicts)


def _run_entry(entry: ZooEntry, backend: str, device: str, threads: int, debug: bool,
               precision: str, target: str | None) -> ZooResult:
    from ..conversion import convert
    from ..errors import ConversionError
    from ..frontends.detect import detect_format
    from ..validate import validate

    start = time.perf_counter()
    if entry.pending:
        try:
            entry = materialize(entry)
        except ConversionError as exc:
            return ZooResult(entry.name, "error", path=None, source=entry.source,
                             licence=entry.licence, message=str(exc),
                             reason_code="generator_failed", rtol=entry.rtol, atol=entry.atol,
                             timings={"total": time.perf_counter() - start})
    base: dict[str, Any] = {"name": entry.name, "path": entry.path, "source": entry.source,
                            "licence": entry.licence, "rtol": entry.rtol, "atol": entry.atol}
    if entry.path is None:
        return ZooResult(status="skipped", message=entry.missing, reason_code="not_available",
                         **base)
    timings: dict[str, float] = {}
    fmt = ""
    try:
        check_digest(entry)
        model = load_model(entry)
        fmt = detect_format(model)
        result = convert(model, fmt=fmt, precision=precision, target=target,
                         **convert_options(entry))
        timings["convert"] = time.perf_counter() - start
        rtol, atol = entry.rtol, entry.atol
        if precision != "float32":
            from ..validate.core import default_tolerance

            wide_rtol, wide_atol, _ = default_tolerance(result.graph)
            rtol, atol = max(rtol, wide_rtol), max(atol, wide_atol)
            base.update(rtol=rtol, atol=atol)
        overrides = entry_inputs(entry, result)
        report = validate(model, inputs=overrides or None, seed=entry.seed, backend=backend,
                          device=device, rtol=rtol, atol=atol, threads=threads,
                          result=result, expected=stored_outputs(entry, result) or None,
                          precision=precision, target=target)
    except ModelChanged as exc:
        timings["total"] = time.perf_counter() - start
        return ZooResult(status="error", format=fmt, message=str(exc),
                         reason_code="model_changed", timings=timings, **base)
    except ConversionError as exc:
        timings["total"] = time.perf_counter() - start
        message = str(exc)
        if debug:
            message += "\n" + traceback.format_exc()
        return ZooResult(status="error", format=fmt, message=message,
                         reason_code=exc.reason_code, timings=timings, **base)
    except Exception as exc:  # noqa: BLE001 - one model's failure must not stop the zoo
        timings["total"] = time.perf_counter() - start
        message = f"{type(exc).__name__}: {exc}"
        if debug:
            message += "\n" + traceback.format_exc()
        return ZooResult(status="error", format=fmt, message=message,
                         reason_code="run_error", timings=timings, **base)
    timings.update({k: v for k, v in report.timings.items() if k != "convert"})
    timings["total"] = time.perf_counter() - start
    failed = [c.name for c in report.outputs if not c.passed]
    message = f"outputs outside tolerance: {', '.join(failed)}" if failed else ""
    overflow = next((n for n in report.notes if n.startswith("float16 overflow first")), None)
    if failed and overflow:  # precision="float16": say why in the row's message
        message += f" ({overflow}: numerically unsuited to float16)"
    from ..targets.check import summary

    unsupported = tuple(summary(report.target_violations))
    if unsupported:
        message = "; ".join(filter(None, [message, f"{report.target} lacks "
                                          f"{', '.join(unsupported)}"]))
    return ZooResult(
        status="pass" if report.passed else "fail", format=fmt, message=message,
        max_abs=float(report.max_abs), max_rel=float(report.max_rel),
        outputs=tuple(c.to_dict() for c in report.outputs),
        divergence=report.divergence.to_dict() if report.divergence else None,
        timings=timings, conversion=dict(report.conversion),
        operations=len(result.graph.operations), notes=tuple(report.notes),
        unsupported=unsupported, **base)


def _worker(entry: ZooEntry, backend: str, device: str, threads: int,
            precision: str = "float32", profiles: Sequence[str] = (),
            budget: Budget | None = None) -> ZooResult:
    if budget is not None and budget.limited:
        from .isolation import isolated_entry

        return isolated_entry(entry, backend, device, threads, precision, profiles, budget)
    return run_entry(entry, backend, device, threads, precision=precision, profiles=profiles)


def _worker_signals() -> None:
    """In a worker: ignore SIGINT (a terminal's Ctrl-C reaches the whole process group; the
    parent decides) and turn SIGTERM into SystemExit, so `finally` clauses remove the
    worker's temporary files when the parent stops it."""
    import signal

    def terminate(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, terminate)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and terminate the running workers (SIGTERM, see
    `_worker_signals`), without waiting for their models to finish."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    for proc in processes:
        proc.join(timeout=10)


ENGINES = ("auto", "dask", "pool")


def run_zoo(entries: Sequence[ZooEntry], *, jobs: int = 1, backend: str = "reference",
            device: str = "cpu", on_done: Callable[[str], None] | None = None,
            skip: Mapping[str, str] | None = None, precision: str = "float32",
            profiles: Sequence[str] = (), client: Any = None, scheduler: str | None = None,
            engine: str = "auto", budget: Budget | None = None) -> ZooReport:
    """Run every entry (see the module docstring). `skip` maps entry names to a reason:
    those entries are not run and appear in the report as "skipped" with that reason
    (reason_code "not_run"), e.g. slow entries without --include-slow. `precision` converts
    every entry to it (`run_entry`). `profiles` (target names) adds one verdict per profile
    to each row (`run_entry(profiles=...)`; the report has a column per profile).

    What runs the models (`converter.zoo.cluster` for Dask): a `dask.distributed` `client`,
    or the scheduler at address `scheduler` (one task per model); else with `jobs` > 1 a
    Dask LocalCluster of `jobs` worker processes when `distributed` is installed and
    `engine` is "auto" or "dask", the process pool otherwise ("pool", or no Dask); else this
    process. `budget` (`Budget`) bounds each model's time and memory, the model then running
    in a forked child (`converter.zoo.isolation`; Dask tasks always do)."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    done = on_done or (lambda _name: None)
    skip = skip or {}
    results: list[ZooResult | None] = [None] * len(entries)
    runnable = [i for i, e in enumerate(entries)
                if (e.path is not None or e.pending) and e.name not in skip]
    for i, e in enumerate(entries):
        if e.name in skip:
            results[i] = ZooResult(e.name, "skipped", path=e.path, source=e.source,
                                   licence=e.licence, message=skip[e.name],
                                   reason_code="not_run", rtol=e.rtol, atol=e.atol)
            done(e.name)
        elif e.path is None and not e.pending:
            results[i] = run_entry(e, backend, device, precision=precision)
            done(e.name)

    def record(i: int, result: ZooResult) -> None:
        results[i] = result
        done(entries[i].name)

    workers = min(jobs, len(runnable))
    use_dask = client is not None or scheduler is not None or (
        workers > 1 and engine != "pool" and _dask_installed(engine))
    if use_dask:
        from .cluster import run_on_dask

        label, retried = run_on_dask([(i, entries[i]) for i in runnable], record, jobs=jobs,
                                     backend=backend, device=device, precision=precision,
                                     profiles=tuple(profiles), budget=budget or Budget(),
                                     client=client, scheduler=scheduler)
        import dataclasses

        for i, n in retried.items():
            r = results[i]
            if r is not None:
                results[i] = dataclasses.replace(r, attempts=n)
    elif workers <= 1:
        label = "in-process"
        for i in runnable:
            record(i, _worker(entries[i], backend, device, 0, precision, tuple(profiles),
                              budget))
    else:
        label = "process pool"
        _run_pool(entries, runnable, record, workers, backend, device, precision,
                  tuple(profiles), budget)
    return ZooReport(tuple(r for r in results if r is not None), backend, device, jobs,
                     started, time.perf_counter() - t0, tuple(profiles), engine=label)


def _dask_installed(engine: str) -> bool:
    """Whether `dask.distributed` can be imported; with `engine` "dask", an error when not."""
    import importlib.util

    found = importlib.util.find_spec("distributed") is not None
    if not found and engine == "dask":
        from ..errors import ConversionError

        raise ConversionError("the Dask engine needs dask.distributed: pip install "
                              "'webnn-converter[cluster]'")
    return found


def _run_pool(entries: Sequence[ZooEntry], runnable: Sequence[int],
              record: Callable[[int, ZooResult], None], workers: int, backend: str,
              device: str, precision: str, profiles: tuple[str, ...],
              budget: Budget | None) -> None:
    """The plain install's engine: a ProcessPoolExecutor of `workers` spawned processes."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    env_threads = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx,
                                   initializer=_worker_signals)
        try:
            futures = {pool.submit(_worker, entries[i], backend, device, 1, precision,
                                   profiles, budget): i
                       for i in runnable}
            for fut in as_completed(futures):
                i = futures[fut]
                try:
                    result = fut.result()
                except Exception as exc:  # noqa: BLE001 - a crashed worker
                    e = entries[i]
                    result = ZooResult(e.name, "error", path=e.path, source=e.source,
                                       licence=e.licence,
                                       message=f"worker failed: {type(exc).__name__}: "
                                               f"{exc}", reason_code="worker_crash",
                                       rtol=e.rtol, atol=e.atol)
                record(i, result)
        except BaseException:  # interrupted (SIGINT, SIGTERM): stop the workers now
            _stop_workers(pool)
            raise
        pool.shutdown()
    finally:
        if env_threads is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = env_threads
