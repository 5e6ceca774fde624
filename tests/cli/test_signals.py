"""SIGINT / SIGTERM at any moment of a `webnn-convert` process (the console entry point,
`cli.entry`): the imports, the command, the forked reference child of `validate`, the way
out after the result is printed. Every run ends with exit code 130 (SIGINT) or 143 (SIGTERM)
and exactly one `error: interrupted` / `error: terminated` line, never a traceback, never
a death by the signal (-2, -15) and never a swallowed signal (0).

The signals are sent at sampled delays, but no assertion depends on when they land:
- the CLI is started with both signals blocked (the mask is inherited across exec, and the
  entry point unblocks them once its handlers are set), so a signal sent while the
  interpreter itself starts, before any code of the converter runs, waits for the handlers
  instead of killing the process;
- exit code 0 (with the complete output and nothing on stderr) is accepted only for a
  signal that arrived once the process was on its way out: right after sending it, the
  process had exited (a zombie, or already reaped by `Popen.send_signal`'s own poll) or was
  blocking the signal with its handlers set (`cli.signals.finish`, the last microseconds
  before `os._exit`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from tests.cli.models import tiny_cnn

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD_S = 300
WORDS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_cnn(tmp_path_factory.mktemp("signals") / "tiny.onnx")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def _spawn(args: list[str]) -> subprocess.Popen[bytes]:
    """`webnn-convert ARGS` (the console entry point) started with SIGINT and SIGTERM
    blocked (see the module docstring)."""
    both = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, both)
    try:
        return subprocess.Popen([sys.executable, "-m", "cli.entry", *args], env=_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _on_its_way_out(pid: int, sig: int) -> bool:
    """Whether process `pid` has exited, or blocks `sig` with the CLI's handlers set (its
    exit path; blocked without them is the start-up `_spawn` arranged) right now."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True  # reaped
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    if fields.get("State", "").strip().startswith(("Z", "X")):
        return True

    def has(mask: str, number: int) -> bool:
        return bool(int(fields.get(mask, "0").strip() or "0", 16) >> (number - 1) & 1)

    return has("SigBlk", sig) and has("SigCgt", signal.SIGINT) and has("SigCgt",
                                                                      signal.SIGTERM)


def _interrupted(args: list[str], sig: int, delay: float) -> tuple[int, str, str, bool]:
    """(exit code, stdout, stderr, late) of a run sent `sig` after `delay` seconds; late:
    the process was already on its way out when the signal was sent."""
    proc = _spawn(args)
    try:
        time.sleep(delay)
        proc.send_signal(sig)  # polls first: nothing is sent to a process already reaped
        late = proc.returncode is not None or _on_its_way_out(proc.pid, sig)
        out, err = proc.communicate(timeout=HANG_GUARD_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out.decode(), err.decode(), late


def _check(result: tuple[int, str, str, bool], sig: int, complete: str) -> bool:
    """Assert the rules of the module docstring; True when the signal interrupted."""
    code, out, err, late = result
    assert "Traceback" not in err, err
    if code == 0:
        assert late, f"signal {sig} swallowed (exit 0)\n{err}"
        assert complete in out and err == "", (out, err)
        return False
    assert code == 128 + sig, (code, err)
    assert err == f"error: {WORDS[signal.Signals(sig)]}\n", err
    return True


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_start_up(tiny: Path, tmp_path: Path, sig: int) -> None:
    """Ctrl-C or SIGTERM while the CLI imports its modules (about the first second) or
    converts: one line, 130 / 143. (What an interrupted export leaves is
    tests/cli/test_output.py's subject.)"""
    interrupted = 0
    for i, delay in enumerate((0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)):
        out = tmp_path / f"out{i}"
        result = _interrupted(["convert", str(tiny), "--dim", "batch=1", "-o", str(out)], sig,
                              delay)
        if _check(result, sig, "converted"):
            interrupted += 1
    assert interrupted  # a signal at 0 s lands during the imports, whatever the load


def test_signals_across_a_validate_run(tiny: Path) -> None:
    """Signals at 20 moments spread over a `validate` run (its length measured once here),
    alternately SIGINT and SIGTERM: the imports, the conversion, the forked reference child
    and its reaping, the report, the way out."""
    args = ["validate", str(tiny), "--dim", "batch=1"]
    start = time.monotonic()
    plain = subprocess.run([sys.executable, "-m", "cli.entry", *args], env=_env(),
                           capture_output=True, timeout=HANG_GUARD_S)
    length = time.monotonic() - start
    assert plain.returncode == 0, plain.stderr
    complete = plain.stdout.decode()
    for i in range(20):
        sig = (signal.SIGINT, signal.SIGTERM)[i % 2]
        _check(_interrupted(args, sig, length * 1.1 * i / 19), sig, complete)


def test_the_entry_point_imports_nothing_slow() -> None:
    """The handlers are set before anything slow is imported: importing the entry module
    loads neither click nor numpy, and the console script is that module."""
    code = ("import sys, cli.entry; "
            "print(sorted(m for m in ('click', 'numpy', 'onnx', 'cli.main') "
            "if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True,
                       text=True, timeout=HANG_GUARD_S)
    assert r.returncode == 0 and r.stdout.strip() == "[]", (r.stdout, r.stderr)
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["webnn-convert"] == "cli.entry:main"


def test_a_signal_ignored_at_start_stays_ignored(tiny: Path, tmp_path: Path) -> None:
    """`cmd &` in a script starts the CLI with SIGINT ignored: it stays ignored."""
    code = ("import signal, subprocess, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
            "p = subprocess.Popen([sys.executable, '-m', 'cli.entry'] + sys.argv[1:]); "
            "p.send_signal(signal.SIGINT); sys.exit(p.wait())")
    r = subprocess.run([sys.executable, "-c", code, "convert", str(tiny), "--dim", "batch=1",
                        "-o", str(tmp_path / "out")], env=_env(), capture_output=True,
                       text=True, timeout=HANG_GUARD_S)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out").is_dir()
