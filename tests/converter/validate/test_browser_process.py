"""The harness process never outlives a call (issue 27.6), checked without a browser: a shell
stands in for run_page.mjs, with a child that ignores SIGTERM and a grandchild in a session
of its own (as puppeteer starts Chromium). On a timeout, a KeyboardInterrupt, or `stop()`,
all of them are gone afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from converter.validate.browser_process import Finished, descendant_groups, run_contained, stop

HANG_GUARD_S = 300.0

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="process groups and /proc: Linux")

# sh ignores SIGTERM (only SIGKILL ends it), starts `sleep` in a session of its own and
# another that ignores SIGTERM too, writes their pids, then waits
TREE = """trap '' TERM
setsid sleep 1000 &
echo $! >> "$1"
sh -c "trap '' TERM; sleep 1000" &
echo $! >> "$1"
echo $$ >> "$1"
echo started
wait
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _pids(record: Path, count: int = 3) -> list[int]:
    guard = time.monotonic() + HANG_GUARD_S
    while time.monotonic() < guard:
        pids = [int(x) for x in record.read_text().split()] if record.exists() else []
        if len(pids) >= count:
            return pids
        time.sleep(0.02)
    raise AssertionError("the process tree did not start")


def _wait_for_own_session(pid: int) -> None:
    """Wait until `pid` leads a session of its own (field 6 of /proc/PID/stat)."""
    guard = time.monotonic() + HANG_GUARD_S
    while time.monotonic() < guard:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        if int(fields[3]) == pid:
            return
        time.sleep(0.02)
    raise AssertionError(f"{pid} never started a session of its own")


def _gone(pids: list[int]) -> list[int]:
    """The pids among `pids` still alive once SIGKILLed processes had time to vanish."""
    guard = time.monotonic() + 60
    left = [p for p in pids if _alive(p)]
    while left and time.monotonic() < guard:
        time.sleep(0.05)
        left = [p for p in left if _alive(p)]
    return left


def test_a_normal_end_returns_the_output() -> None:
    done = run_contained(["sh", "-c", "echo 'out\u2028put'; echo err >&2; exit 3"],
                         timeout=HANG_GUARD_S)
    assert done == Finished(3, "out\u2028put\n", "err\n")


def test_a_missing_executable_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        run_contained([str(tmp_path / "no-such-tool")], timeout=HANG_GUARD_S)


def test_stop_kills_the_whole_tree(tmp_path: Path) -> None:
    record = tmp_path / "pids"
    process = subprocess.Popen(["sh", "-c", TREE, "sh", str(record)], start_new_session=True,
                               stdout=subprocess.DEVNULL)
    pids = _pids(record)
    _wait_for_own_session(pids[0])  # `setsid` runs a moment after `$!` is written
    groups = descendant_groups(process.pid)
    assert pids[0] in groups  # the grandchild's own session, found through /proc
    stop(process, grace=0.5)
    assert process.returncode == -signal.SIGKILL  # it ignored SIGTERM
    assert _gone(pids) == []


def test_a_timeout_kills_the_whole_tree(tmp_path: Path) -> None:
    record = tmp_path / "pids"
    with pytest.raises(subprocess.TimeoutExpired):
        run_contained(["sh", "-c", TREE, "sh", str(record)], timeout=3)
    # whatever had started is gone (the shell, killed, can start nothing more)
    pids = [int(x) for x in record.read_text().split()] if record.exists() else []
    assert _gone(pids) == []


def test_a_keyboard_interrupt_kills_the_whole_tree(tmp_path: Path) -> None:
    record = tmp_path / "pids"
    pids: list[int] = []

    def interrupt() -> None:
        pids.extend(_pids(record))
        os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=interrupt, daemon=True)
    thread.start()
    with pytest.raises(KeyboardInterrupt):
        run_contained(["sh", "-c", TREE, "sh", str(record)], timeout=HANG_GUARD_S,
                      lifeline=True)
    thread.join(timeout=HANG_GUARD_S)
    assert len(pids) == 3
    assert _gone(pids) == []


def test_an_interrupt_before_the_readers_start_still_stops_the_tree(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C landing while the output readers start (seen on a loaded machine): the
    interrupt propagates as itself (not 'cannot join thread before it is started') and the
    tree is stopped."""
    record = tmp_path / "pids"
    real_start = threading.Thread.start
    pids: list[int] = []

    def start(self: threading.Thread) -> None:
        pids.extend(_pids(record))  # the tree is up
        monkeypatch.setattr(threading.Thread, "start", real_start)
        raise KeyboardInterrupt

    monkeypatch.setattr(threading.Thread, "start", start)
    with pytest.raises(KeyboardInterrupt):
        run_contained(["sh", "-c", TREE, "sh", str(record)], timeout=HANG_GUARD_S)
    assert len(pids) == 3
    assert _gone(pids) == []
