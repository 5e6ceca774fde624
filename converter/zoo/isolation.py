"""One zoo model in a forked child of the worker, under a time and a memory budget.

`isolated_entry` runs `runner.run_entry` in a child made with `os.fork` (the worker's
imports are shared, nothing is re-imported) in a process group of its own, and returns the
child's `ZooResult`. When the child does not give one, the model is an "error" row and the
worker goes on with the next model:

- the child is killed (SIGKILL to its process group) once it has run `budget.seconds`:
  reason_code "timeout", "exceeded its time budget of N s";
- `budget.memory` bytes cap the child's address space (RLIMIT_AS): an allocation past it
  fails inside the child (usually a MemoryError row, reason_code "run_error"); a child that
  dies of it instead is "crashed";
- a child killed by a signal or exiting without a result (a native crash in a framework,
  an os._exit in a generator): reason_code "crashed", naming the signal or exit code.

Restrictions: where `os.fork` does not exist (Windows) the model runs in the calling process
without budgets; the child is forked from whichever thread runs the task (a Dask worker's
task thread), so a lock another thread of the worker holds stays held in the child: the
child uses only the converter's own code and the frameworks, which take no such lock, and
a child stuck on one anyway ends at its time budget. A budget of 0 (or None) is no limit.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import sys
import time
from collections.abc import Sequence
from typing import Any

from converter.core.isolate import run_child, signal_name
from converter.zoo.manifest import ZooEntry
from converter.zoo.records import Budget, ZooResult
from converter.zoo.runner import run_entry


def _failed(entry: ZooEntry, reason: str, message: str, seconds: float) -> ZooResult:
    return ZooResult(entry.name, "error", path=entry.path, source=entry.source,
                     licence=entry.licence, message=message, reason_code=reason,
                     rtol=entry.rtol, atol=entry.atol, timings={"total": seconds})


def _child(write_fd: int, entry: ZooEntry, backend: str, device: str, threads: int,
           precision: str, profiles: Sequence[str], memory: int | None, mask: Any
           ) -> None:  # pragma: no cover - in the child
    """Run the entry in a process group of its own, watched for its parent's death and under
    the memory cap, and send its result (`converter.core.isolate.run_child`); never returns."""

    def setup() -> None:
        os.setpgid(0, 0)
        _orphan_watch()

    def produce() -> bytes:
        if memory:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        result = run_entry(entry, backend, device, threads, precision=precision,
                           profiles=profiles)
        return pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)

    run_child(write_fd, mask, produce, setup)


def _orphan_watch() -> None:  # pragma: no cover - in the child
    """End this child when its parent (the worker) dies: a killed worker's model must not
    go on running (the engine starts it again elsewhere)."""
    import threading

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(75)

    threading.Thread(target=watch, daemon=True).start()


def _kill_group(pid: int) -> None:
    """SIGKILL the child `pid` (not reaped yet) and its process group."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def isolated_entry(entry: ZooEntry, backend: str = "reference", device: str = "cpu",
                   threads: int = 0, precision: str = "float32",
                   profiles: Sequence[str] = (), budget: Budget | None = None) -> ZooResult:
    """`run_entry(entry, ...)` in a forked child under `budget` (see the module docstring);
    never raises but for an interruption of the caller (the child is then killed)."""
    budget = budget or Budget()
    if not hasattr(os, "fork"):
        return run_entry(entry, backend, device, threads, precision=precision,
                         profiles=profiles)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, ValueError, OSError):
            pass
    start = time.monotonic()
    read_fd, write_fd = os.pipe()
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGINT, signal.SIGTERM))
    try:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(read_fd)
            _child(write_fd, entry, backend, device, threads, precision, profiles,
                   budget.memory, mask)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    os.close(write_fd)
    chunks: list[bytes] = []
    timed_out = False
    reaped = False
    status = 0
    try:
        while True:
            wait = None
            if budget.seconds:
                wait = budget.seconds - (time.monotonic() - start)
                if wait <= 0:
                    timed_out = True
                    break
            ready, _, _ = select.select([read_fd], [], [], wait)
            if not ready:
                continue
            chunk = os.read(read_fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        if timed_out:
            _kill_group(pid)
        _, status = os.waitpid(pid, 0)
        reaped = True
    finally:
        os.close(read_fd)
        if not reaped:  # interrupted: the child goes too
            _kill_group(pid)
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
    seconds = time.monotonic() - start
    if timed_out:
        return _failed(entry, "timeout", f"exceeded its time budget of {budget.seconds:g} s "
                       "(killed)", seconds)
    code = os.waitstatus_to_exitcode(status)
    data = b"".join(chunks)
    if code == 0 and data:
        try:
            result = pickle.loads(data)
        except Exception as exc:  # noqa: BLE001 - a truncated result
            return _failed(entry, "crashed", f"its result could not be read: {exc}", seconds)
        if isinstance(result, ZooResult):
            return result
    how = signal_name(-code) if code < 0 else f"exit code {code}"
    limit = (f" (memory budget {budget.memory} bytes)" if budget.memory else "")
    return _failed(entry, "crashed", f"the process running it died ({how}){limit}", seconds)
