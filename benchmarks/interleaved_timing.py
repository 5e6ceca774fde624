"""Timing contenders against each other, shared by the zoo benchmarks: a `Runner` runs one
contender on fixed inputs; `time_interleaved` runs several once per round, interleaved, and
reports medians of wall and CPU time; `agree` / `matches` check their outputs agree.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np

TOL = 1e-3

Runner = Callable[[], Sequence[np.ndarray]]
"""One contender: runs it once on its fixed inputs, returns its outputs."""


def agree(ours: Sequence[np.ndarray], theirs: Sequence[np.ndarray], atol: float,
          rtol: float) -> tuple[bool, float]:
    """Whether every output satisfies max|ours − theirs| ≤ atol + rtol·max|theirs|, and the
    largest error."""
    ok, worst = True, 0.0
    for a, b in zip(ours, theirs, strict=True):
        a64 = np.asarray(a, dtype=np.float64)
        b64 = np.asarray(b, dtype=np.float64).reshape(a64.shape)
        err = float(np.max(np.abs(a64 - b64))) if a64.size else 0.0
        scale = float(np.max(np.abs(b64))) if b64.size else 0.0
        worst = max(worst, err)
        ok = ok and bool(err <= atol + rtol * scale)
    return ok, worst


def matches(ours: Sequence[np.ndarray], theirs: Sequence[np.ndarray]) -> tuple[bool, float]:
    """`agree` within `TOL` (absolute and relative)."""
    return agree(ours, theirs, TOL, TOL)


def time_interleaved(runners: Mapping[str, Runner], warmup: int, repeat: int,
                     pause: float = 0.0) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall time and median process CPU time (seconds) of each runner, all run once
    per round, interleaved, the order rotating every round. CPU time is steadier on a loaded
    machine, but also counts worker threads spinning while they wait. `pause` seconds of
    sleep after each run let the previous contender's spinning worker threads go idle, so
    that they do not take cores from the next one."""
    names = list(runners)
    for _ in range(warmup):
        for run in runners.values():
            run()
    wall: dict[str, list[float]] = {k: [] for k in runners}
    cpu: dict[str, list[float]] = {k: [] for k in runners}
    for i in range(repeat):
        for k in names[i % len(names):] + names[:i % len(names)]:
            if pause:
                time.sleep(pause)
            c, t = time.process_time(), time.perf_counter()
            runners[k]()
            wall[k].append(time.perf_counter() - t)
            cpu[k].append(time.process_time() - c)
    return ({k: statistics.median(v) for k, v in wall.items()},
            {k: statistics.median(v) for k, v in cpu.items()})
