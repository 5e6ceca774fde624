"""No orphan Chromium (issue 27.6): `webnn-convert validate --browser`, interrupted with SIGINT
or SIGTERM at several moments after a Chromium has started (the start check's, then the
graph run's), exits 130 / 143 with one line and leaves no process of its harness behind; a
CLI killed outright (SIGKILL: no Python clean-up at all) leaves none either, the harness
noticing its parent's death (`run_page.mjs --lifeline`).

The processes of one run are told from those of other runs on the machine by a marker in the
CLI's environment, which Node.js and the Chromium main process inherit; Chromium's helpers
(zygotes, renderers, GPU and network processes) rewrite their environment but stay in the
Chromium main process' session, so every process of a marked session counts too. A process
counts as left behind while it exists and is not a zombie."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cli.models import tiny_cnn

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
MARK = "WEBNN_INTERRUPT_TEST"
HANG_GUARD_S = 300.0
MOMENTS = [(k, d) for k in (1, 2) for d in (0.0, 0.15, 0.4)]
"""(which Chromium start, 1 = the start check's, 2 = the graph run's; seconds after it)."""


@dataclass(frozen=True)
class Proc:
    pid: int
    start: int
    session: int
    command: str


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, session id, start time) of a process, None when gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()
    return fields[0], int(fields[3]), int(fields[19])


def _processes(marker: str, sessions: set[int]) -> Iterator[Proc]:
    """The live processes carrying `marker` in their environment or in one of `sessions`."""
    needle = f"{MARK}={marker}".encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        st = _stat(pid)
        if st is None or st[0] in ("Z", "X"):
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if needle in environ.split(b"\0") or st[1] in sessions:
            yield Proc(pid, st[2], st[1], command.decode(errors="replace"))


@dataclass(frozen=True)
class Outcome:
    signalled: bool
    returncode: int
    stderr: str
    seen: int
    left: tuple[str, ...]


def interrupted_run(model: Path, executable: str, which: int, delay: float, sig: int
                    ) -> Outcome:
    """Start `validate --browser`, wait for its `which`-th Chromium main process, `delay`
    seconds more, send `sig` to the CLI; then the processes of the run that remain."""
    marker = uuid.uuid4().hex
    env = dict(os.environ, **{MARK: marker},
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-c", "from cli.main import main; main()",
                             "validate", "--browser", "--dim", "batch=1", str(model)],
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    chromes: set[int] = set()  # Chromium main processes (their pid = their session id)
    seen: set[tuple[int, int]] = set()
    signalled = False
    guard = time.monotonic() + HANG_GUARD_S
    try:
        while proc.poll() is None and time.monotonic() < guard:
            for p in _processes(marker, chromes):
                seen.add((p.pid, p.start))
                if p.command.startswith(executable + " ") and p.session == p.pid:
                    chromes.add(p.pid)
            if len(chromes) >= which:
                time.sleep(delay)
                if proc.poll() is None:
                    proc.send_signal(sig)
                    signalled = True
                break
            time.sleep(0.01)
        _, err = proc.communicate(timeout=HANG_GUARD_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    left: list[Proc] = []
    guard = time.monotonic() + 60  # SIGKILLed processes take a moment to be gone
    while time.monotonic() < guard:
        left = [p for p in _processes(marker, chromes)]
        if not left:
            break
        time.sleep(0.2)
    return Outcome(signalled, proc.returncode, err.decode(errors="replace"), len(seen),
                   tuple(f"{p.pid}: {p.command[:120]}" for p in left))


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_cnn(tmp_path_factory.mktemp("interrupts") / "tiny.onnx")


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_browser_run_leaves_no_chromium(browser: Any, model: Path,
                                                        sig: signal.Signals) -> None:
    expected = {signal.SIGINT: 130, signal.SIGTERM: 143}[sig]
    interrupted = 0
    for which, delay in MOMENTS:
        outcome = interrupted_run(model, browser.executable, which, delay, sig)
        moment = f"{sig.name} {delay} s after Chromium #{which}"
        assert outcome.seen > 0, f"{moment}: no process of the run was ever seen"
        assert outcome.left == (), f"{moment}: left behind: {outcome.left}"
        if not outcome.signalled or outcome.returncode == 0:
            continue  # the run ended before the signal came
        interrupted += 1
        assert outcome.returncode == expected, (moment, outcome)
        lines = [line for line in outcome.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "Traceback" not in outcome.stderr, (moment, outcome.stderr)
    # the start check's browser runs for a while: those moments at least are interruptions
    assert interrupted >= len(MOMENTS) // 2


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("which", [1, 2])
def test_a_killed_cli_leaves_no_chromium(browser: Any, model: Path, which: int) -> None:
    outcome = interrupted_run(model, browser.executable, which, 0.0, signal.SIGKILL)
    assert outcome.seen > 0
    assert outcome.left == (), f"left behind: {outcome.left}"
    if outcome.signalled:
        assert outcome.returncode == -signal.SIGKILL



def _harness(browser: Any, tmp_path: Path, url: str, marker: str
             ) -> tuple[subprocess.Popen[bytes], set[int]]:
    """run_page.mjs --lifeline on a page that never answers (a 600 s job), once its Chromium
    runs: (the process, the Chromium session)."""
    from converter.validate.page_server import HARNESS_FILES

    jobs = tmp_path / "jobs.json"
    jobs.write_text(json.dumps({"jobs": [{"url": url, "timeoutMs": 600000}]}))
    env = dict(browser.env(), **{MARK: marker})
    proc = subprocess.Popen([browser.node, str(HARNESS_FILES / "run_page.mjs"), "--lifeline",
                             "--jobs", str(jobs)], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    chromes: set[int] = set()
    guard = time.monotonic() + HANG_GUARD_S
    while not chromes and proc.poll() is None and time.monotonic() < guard:
        chromes = {p.pid for p in _processes(marker, set())
                   if p.command.startswith(browser.executable + " ") and p.session == p.pid}
        time.sleep(0.01)
    return proc, chromes


@pytest.fixture
def hanging_page(tmp_path: Path) -> Iterator[str]:
    """The address of a page that never sets its result, served while the test runs."""
    from converter.validate.page_server import PageServer

    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "hang.html").write_text("<!doctype html><p>never done</p>\n")
    with PageServer(tmp_path / "site") as server:
        yield server.url("/hang.html")


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("how", ["lifeline", "SIGTERM", "SIGINT"])
def test_the_harness_closes_its_browser(browser: Any, tmp_path: Path, hanging_page: str,
                                        how: str) -> None:
    """Its parent gone (stdin closed) or a signal: the harness kills its Chromium and exits
    at once, long before its 600 s job would end."""
    marker = uuid.uuid4().hex
    proc, chromes = _harness(browser, tmp_path, hanging_page, marker)
    try:
        assert chromes, proc.stderr.read().decode() if proc.stderr and proc.poll() else ""
        if how == "lifeline":
            assert proc.stdin is not None
            proc.stdin.close()
        else:
            proc.send_signal(getattr(signal, how))
        code = proc.wait(timeout=HANG_GUARD_S / 2)  # the job alone would take 600 s
    finally:
        for group in (proc.pid, *chromes) if proc.poll() is None else ():
            try:
                os.killpg(group, signal.SIGKILL)  # this test's own processes only
            except ProcessLookupError:
                pass
        proc.wait()
    assert code == {"lifeline": 1, "SIGTERM": 143, "SIGINT": 130}[how]
    left: list[Proc] = []
    guard = time.monotonic() + 60
    while time.monotonic() < guard:
        left = list(_processes(marker, chromes))
        if not left:
            break
        time.sleep(0.2)
    assert left == []
