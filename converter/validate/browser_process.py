"""Running a helper process (the browser harness `run_page.mjs`, `npm ci`) so that nothing it
starts outlives the call.

`run_contained(command, ...)` starts the command in its own session (`start_new_session`, so
its process group is its own and a terminal's Ctrl-C reaches only the Python process) and, on
EVERY way out of the call (normal end, failure, timeout, KeyboardInterrupt, the SystemExit the
CLI raises for SIGTERM), stops the whole tree:

1. while the command still runs, the processes descending from it are noted from /proc (a
   Chromium started by puppeteer is a session of its own, outside the command's group);
2. the command's group gets SIGTERM (run_page.mjs then closes its browser and exits), then,
   after `GRACE_S` or as soon as it has exited, SIGKILL, and so does the group of every noted
   descendant;
3. the command is reaped (only after the kills, so its process group id cannot have been
   reused).

With `lifeline=True` the command's stdin is a pipe this process never writes to: it closes
when this process dies in any way (even SIGKILL), which run_page.mjs (`--lifeline`) takes as
the order to close its browser and exit. Restrictions: POSIX only (process groups, signals);
step 1 needs Linux's /proc (elsewhere only the command's own group is killed). A second
Ctrl-C or SIGTERM during the grace period skips the rest of it (straight to SIGKILL), never
the kill.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

GRACE_S = 3.0
"""How long the command may take to exit after SIGTERM before it gets SIGKILL."""
POLL_S = 0.05


@dataclass(frozen=True)
class Finished:
    """A command that ended by itself: its exit status (negative: killed by that signal) and
    what it wrote (decoded as UTF-8, undecodable bytes replaced)."""

    returncode: int
    stdout: str
    stderr: str


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, process group id) of a live process from /proc, None when gone or a
    zombie."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()  # after "pid (comm) "
    if not fields or fields[0] in ("Z", "X"):
        return None
    return int(fields[1]), int(fields[2])


def descendant_groups(root: int) -> set[int]:
    """The process group ids of the live processes descending from `root` (Linux /proc;
    empty elsewhere)."""
    parents: dict[int, list[int]] = {}
    groups: dict[int, int] = {}
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return set()
    for pid in pids:
        st = _stat(pid)
        if st is not None:
            parents.setdefault(st[0], []).append(pid)
            groups[pid] = st[1]
    found: set[int] = set()
    todo = list(parents.get(root, []))
    seen: set[int] = set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        found.add(groups[pid])
        todo.extend(parents.get(pid, []))
    return found


def _exited(process: subprocess.Popen[bytes]) -> bool:
    """Whether the command has exited, WITHOUT reaping it (its pid, and so its process group
    id, stays reserved until `process.wait()`)."""
    if process.returncode is not None:
        return True
    try:
        info = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def _signal_group(pgid: int, sig: int) -> None:
    if pgid <= 1 or pgid == os.getpgrp():
        return
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop(process: subprocess.Popen[bytes], grace: float = GRACE_S) -> None:
    """SIGTERM the command's group, wait up to `grace` for it, SIGKILL its group and the
    groups of all its descendants, then reap it (see the module docstring). An interruption
    meanwhile (KeyboardInterrupt, SystemExit) cuts the grace short, never the kills, and is
    raised again at the end."""
    pending: BaseException | None = None
    groups: set[int] = set()
    if not _exited(process):
        groups = descendant_groups(process.pid)
        _signal_group(process.pid, signal.SIGTERM)
        try:
            deadline = time.monotonic() + grace
            while not _exited(process) and time.monotonic() < deadline:
                time.sleep(POLL_S)
        except BaseException as exc:  # noqa: BLE001 - a second Ctrl-C or SIGTERM: no grace
            pending = exc
        groups |= descendant_groups(process.pid)
    for pgid in {process.pid, *groups}:
        _signal_group(pgid, signal.SIGKILL)
    while True:
        try:
            process.wait()  # SIGKILLed: ends at once
            break
        except BaseException as exc:  # noqa: BLE001 - raised below, after the reaping
            pending = pending or exc
    if pending is not None:
        raise pending


def _drain(stream: IO[bytes] | None, sink: list[bytes]) -> None:
    if stream is None:
        return
    try:
        sink.append(stream.read())
    except (OSError, ValueError):
        pass


def run_contained(command: Sequence[str], *, env: Mapping[str, str] | None = None,
                  cwd: Path | None = None, timeout: float, lifeline: bool = False
                  ) -> Finished:
    """Run `command` to its end and return what it did; see the module docstring for how
    its process tree is stopped on every way out. Raises FileNotFoundError when the
    executable is missing and subprocess.TimeoutExpired after `timeout` seconds (the tree is
    stopped first)."""
    process = subprocess.Popen(
        list(command), env=dict(env) if env is not None else None, cwd=cwd,
        stdin=subprocess.PIPE if lifeline else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True)
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [threading.Thread(target=_drain, args=(stream, sink), daemon=True)
               for stream, sink in ((process.stdout, out), (process.stderr, err))]
    try:
        for reader in readers:
            reader.start()
        deadline = time.monotonic() + timeout
        while not _exited(process):
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(list(command), timeout)
            time.sleep(POLL_S)
    finally:
        stop(process)
        if process.stdin is not None:
            process.stdin.close()
        for reader, stream in zip(readers, (process.stdout, process.stderr), strict=True):
            if reader.ident is None:  # interrupted before it was started
                continue
            reader.join(timeout=GRACE_S)
            if not reader.is_alive() and stream is not None:
                stream.close()  # else a stray grandchild holds it: left to the collector
    return Finished(int(process.returncode),
                    b"".join(out).decode("utf-8", "replace"),
                    b"".join(err).decode("utf-8", "replace"))


__all__ = ["GRACE_S", "Finished", "descendant_groups", "run_contained", "stop"]
