"""Running a zoo: `run_zoo` hands every model of a manifest to an engine and collects the
report (see `converter.zoo.runner` for what one model's run does).

Engines: a `dask.distributed` cluster (`converter.zoo.cluster`: a scheduler's address or a
client, or a LocalCluster of `jobs` workers when Dask is installed, the `cluster` extra), a
`ProcessPoolExecutor` of spawned workers (the plain install, jobs > 1), or this process
(jobs = 1). Workers run onnxruntime / backends with one thread each. A `Budget` runs each
model in a forked child under it (`converter.zoo.isolation`; Dask tasks always do). An
interruption (KeyboardInterrupt, SIGTERM turned into SystemExit as the CLI does) cancels the
entries not started and stops the workers (pool workers remove their temporary files).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from datetime import UTC, datetime
from typing import Any

from converter.zoo import runner
from converter.zoo.manifest import ZooEntry
from converter.zoo.records import Budget, ZooReport, ZooResult


def _worker(entry: ZooEntry, backend: str, device: str, threads: int,
            precision: str = "float32", profiles: Sequence[str] = (),
            budget: Budget | None = None) -> ZooResult:
    if budget is not None and budget.limited:
        from converter.zoo.isolation import isolated_entry

        return isolated_entry(entry, backend, device, threads, precision, profiles, budget)
    return runner.run_entry(entry, backend, device, threads, precision=precision,
                            profiles=profiles)


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
            results[i] = runner.run_entry(e, backend, device, precision=precision)
            done(e.name)

    def record(i: int, result: ZooResult) -> None:
        results[i] = result
        done(entries[i].name)

    workers = min(jobs, len(runnable))
    use_dask = client is not None or scheduler is not None or (
        workers > 1 and engine != "pool" and _dask_installed(engine))
    if use_dask:
        from converter.zoo.cluster import run_on_dask

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
        from converter.core.errors import ConversionError

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
