"""Time in tests: never a pass/fail criterion measured on the wall clock (the suite must pass
on a loaded 2-core machine). A test that must bound work measures CPU time (its own, or its
children's) with wide margins; a test that waits for a child uses `HANG_GUARD_S`, which only
turns a hang into a failure."""

from __future__ import annotations

import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

HANG_GUARD_S = 900.0
"""How long a test waits for a child process or a file it writes before calling it hung."""


@dataclass
class CpuSeconds:
    """CPU seconds (user + system) spent inside a `cpu_seconds()` block; `children` counts
    only child processes waited for in the block."""

    children: bool
    seconds: float = field(default=0.0)


def _now(children: bool) -> float:
    if not children:
        return time.process_time()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@contextmanager
def cpu_seconds(*, children: bool = False) -> Iterator[CpuSeconds]:
    """Measure the CPU time of this process (or, with `children`, of the child processes that
    end and are waited for inside the block)."""
    spent = CpuSeconds(children)
    start = _now(children)
    try:
        yield spent
    finally:
        spent.seconds = _now(children) - start


def wait_for(condition: object, *, poll: float = 0.05) -> None:
    """Poll `condition()` until it is true or `HANG_GUARD_S` passes (then it simply returns:
    the caller's next assertion reports what is missing)."""
    assert callable(condition)
    deadline = time.monotonic() + HANG_GUARD_S
    while not condition() and time.monotonic() < deadline:
        time.sleep(poll)
