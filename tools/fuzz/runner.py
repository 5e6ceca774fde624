"""Running the real CLI on a case, in a child process with an address-space limit and a
wall-time limit.

- `ForkRunner` (the campaign default): this process has imported the CLI, the converter,
  onnx and numpy once; each run is `os.fork()`: the child puts itself in its own process
  group, sets `RLIMIT_AS`, redirects stdin/stdout/stderr, enables `faulthandler`, calls
  `cli.main.main(argv)` and `os._exit`s with its exit code. It is still a separate process
  running the real CLI, without paying the imports every time.
- `SubprocessRunner` (reproduction, `--mode subprocess`): a fresh
  `python -c "... cli.main.main(argv)"` per run, same limits.

Both run up to `jobs` children at once (`Pool`); on timeout the child first gets SIGUSR1
(faulthandler dumps where it is stuck to its stderr), then its process group is killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.fuzz.classify import CAUSE_END, CAUSE_MARKER

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_MEMORY = 4 << 30
DEFAULT_TIMEOUT = 20.0
MAX_CAPTURE = 1 << 20
THREAD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "ORT_DISABLE_THREAD_SPINNING": "1", "PYTHONHASHSEED": "0"}


@dataclass
class RunResult:
    argv: list[str]
    exit_code: int | None       # None when killed by a signal
    signal: int | None
    timed_out: bool
    seconds: float
    stdout: str
    stderr: str
    maxrss_kb: int


def _read(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_CAPTURE)
    except OSError:
        return ""
    return data.decode("utf-8", "replace")


def preload() -> None:
    """Import what the CLI imports lazily, so that forked children start warm."""
    import cli.main  # noqa: F401
    import converter.api  # noqa: F401
    import converter.conversion.pipeline  # noqa: F401
    import converter.frontends.detect  # noqa: F401
    import converter.io.export.exporter  # noqa: F401
    import converter.validate  # noqa: F401
    from converter import frontends

    for name in frontends.registered():
        frontends.get(name).impl()




def install_site_hook() -> None:
    """For the `--debug` reruns that locate internal errors: a handler's unexpected
    exception is collected into `ConversionFailed` (reason `internal_error`) and its
    traceback is not printed even with --debug; print it to stderr (between CAUSE_MARKER
    and CAUSE_END) when the aggregate is built, so that `classify.site_of` finds the
    handler's frame; an InternalError raised without a cause gets the stack where it was
    made. (Diagnostics only: the classified run never has this hook.)"""
    import traceback

    try:
        from converter.core.errors import ConversionFailed, InternalError
    except ImportError:  # pragma: no cover
        return
    made = InternalError.__init__

    def make(self: Any, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        self._fuzz_stack = traceback.format_stack()[:-1]

    original = ConversionFailed.__init__

    def init(self: Any, errors: Any, *args: Any, **kwargs: Any) -> None:
        original(self, errors, *args, **kwargs)
        for err in getattr(self, "errors", []):
            if getattr(err, "reason_code", "") != "internal_error":
                continue
            print(CAUSE_MARKER, file=sys.stderr)
            cause = getattr(err, "__cause__", None)
            if cause is not None:
                traceback.print_exception(cause, file=sys.stderr)
            else:
                print("Traceback (most recent call last):\n"
                      + "".join(getattr(err, "_fuzz_stack", [])), file=sys.stderr)
            print(CAUSE_END, file=sys.stderr)

    InternalError.__init__ = make  # type: ignore[method-assign]
    ConversionFailed.__init__ = init  # type: ignore[method-assign]


LOAD_CHECK = "@load"


def load_check(path: str) -> int:
    """The round-trip check of a successful convert: `converter.api.load` reads the graph
    it wrote (with its weights); exit 0, or 2 with `error: ...` and the traceback."""
    import traceback

    from converter.api import load

    try:
        load(path)
    except Exception as exc:  # noqa: BLE001 - any failure is the finding
        print(f"error: cannot load the exported {path}: {type(exc).__name__}: {exc}",
              file=sys.stderr)
        traceback.print_exc()
        return 2
    return 0


def is_debug(argv: list[str]) -> bool:
    return len(argv) > 1 and argv[1] == "--debug"


def _limits(memory: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class Runner:
    """Starts one child for `argv` in `run_dir`; its stdout/stderr go to files there."""

    mode = "?"

    def __init__(self, timeout: float = DEFAULT_TIMEOUT, memory: int = DEFAULT_MEMORY
                 ) -> None:
        self.timeout = timeout
        self.memory = memory

    def spawn(self, argv: list[str], run_dir: Path) -> int:
        raise NotImplementedError

    def finished(self, pid: int, status: int) -> None:
        """Called once the child was reaped (the subprocess runner forgets its Popen)."""

    def run(self, argv: list[str], run_dir: Path) -> RunResult:
        """One run, waiting for it."""
        pool = Pool(self, 1)
        pool.submit(None, argv, run_dir)
        return next(pool.results())[1]


class ForkRunner(Runner):
    mode = "fork"

    def __init__(self, timeout: float = DEFAULT_TIMEOUT, memory: int = DEFAULT_MEMORY
                 ) -> None:
        super().__init__(timeout, memory)
        for k, v in THREAD_ENV.items():
            os.environ.setdefault(k, v)
        preload()

    def spawn(self, argv: list[str], run_dir: Path) -> int:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child never returns
            _child(argv, run_dir, self.memory)
        return pid


def _child(argv: list[str], run_dir: Path, memory: int) -> None:  # pragma: no cover
    code = 121
    try:
        os.setpgid(0, 0)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.chdir(run_dir)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd, name in ((1, "stdout.txt"), (2, "stderr.txt")):
            f = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(f, fd)
            os.close(f)
        import faulthandler
        import warnings

        faulthandler.enable(all_threads=True)
        faulthandler.register(signal.SIGUSR1, all_threads=True)
        warnings._filters_mutated()  # type: ignore[attr-defined]  # fresh "once" registries
        if is_debug(argv):
            install_site_hook()
        _limits(memory)
        sys.argv = ["webnn-convert", *argv]
        from cli.main import main

        try:
            if argv[:1] == [LOAD_CHECK]:
                code = load_check(argv[1])
            else:
                main(argv)
                code = 0
        except SystemExit as exc:
            if exc.code is None:
                code = 0
            elif isinstance(exc.code, int):
                code = exc.code
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except BaseException:  # noqa: BLE001 - as the interpreter would report it
            import traceback

            traceback.print_exc()
            code = 1
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:  # noqa: BLE001
                    code = 120
    finally:
        os._exit(code & 0xFF)


CHILD_CODE = (
    "import faulthandler, signal, sys\n"
    "faulthandler.enable(all_threads=True)\n"
    "faulthandler.register(signal.SIGUSR1, all_threads=True)\n"
    "sys.path.insert(0, sys.argv.pop(1))\n"
    "sys.argv[0] = 'webnn-convert'\n"
    "if sys.argv[2:3] == ['--debug']:\n"
    "    from tools.fuzz.runner import install_site_hook\n"
    "    install_site_hook()\n"
    "if sys.argv[1:2] == ['@load']:\n"
    "    from tools.fuzz.runner import load_check\n"
    "    sys.exit(load_check(sys.argv[2]))\n"
    "from cli.main import main\n"
    "main(sys.argv[1:])\n")


class SubprocessRunner(Runner):
    mode = "subprocess"

    def __init__(self, timeout: float = DEFAULT_TIMEOUT, memory: int = DEFAULT_MEMORY
                 ) -> None:
        super().__init__(timeout, memory)
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    def command(self, argv: list[str]) -> list[str]:
        return [sys.executable, "-c", CHILD_CODE, str(ROOT), *argv]

    def spawn(self, argv: list[str], run_dir: Path) -> int:
        env = {**os.environ, **THREAD_ENV}
        memory = self.memory
        with open(run_dir / "stdout.txt", "wb") as out, open(run_dir / "stderr.txt",
                                                              "wb") as err:
            proc = subprocess.Popen(self.command(argv), cwd=run_dir, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=err, env=env, process_group=0,
                                    preexec_fn=lambda: _limits(memory))
        self.procs[proc.pid] = proc
        return proc.pid

    def finished(self, pid: int, status: int) -> None:
        proc = self.procs.pop(pid, None)
        if proc is not None:
            proc.returncode = os.waitstatus_to_exitcode(status)


@dataclass
class _Running:
    key: Any
    argv: list[str]
    run_dir: Path
    start: float
    timed_out: bool = False
    killed_at: float = 0.0


class Pool:
    """Up to `jobs` children at once; `submit` queues a run (`front=True`: next);
    `results()` yields (key, RunResult) as runs end, and may be fed more work meanwhile."""

    def __init__(self, runner: Runner, jobs: int,
                 on_idle: Callable[[], None] | None = None) -> None:
        self.runner = runner
        self.jobs = max(1, jobs)
        self.queue: deque[tuple[Any, list[str], Path]] = deque()
        self.running: dict[int, _Running] = {}
        self.on_idle = on_idle

    def submit(self, key: Any, argv: list[str], run_dir: Path, front: bool = False) -> None:
        (self.queue.appendleft if front else self.queue.append)((key, argv, run_dir))

    def _fill(self) -> None:
        while self.queue and len(self.running) < self.jobs:
            key, argv, run_dir = self.queue.popleft()
            pid = self.runner.spawn(argv, run_dir)
            self.running[pid] = _Running(key, argv, run_dir, time.monotonic())

    def _check_timeouts(self) -> None:
        now = time.monotonic()
        for pid, r in self.running.items():
            if not r.timed_out and now - r.start > self.runner.timeout:
                r.timed_out, r.killed_at = True, now
                _signal(pid, signal.SIGUSR1, group=False)  # faulthandler: where is it stuck
            elif r.timed_out and now - r.killed_at > 0.5:
                _signal(pid, signal.SIGKILL, group=True)

    def kill_all(self) -> None:
        """Stop every running child (an interrupted campaign) and reap it."""
        for pid in list(self.running):
            _signal(pid, signal.SIGKILL, group=True)
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            self.runner.finished(pid, 9)
            del self.running[pid]
        self.queue.clear()

    def results(self) -> Iterator[tuple[Any, RunResult]]:
        self._fill()
        while self.running:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
            if pid == 0:
                self._check_timeouts()
                time.sleep(0.005)
                continue
            r = self.running.pop(pid, None)
            if r is None:
                continue
            self.runner.finished(pid, status)
            _signal(pid, signal.SIGKILL, group=True)  # anything it left running
            seconds = time.monotonic() - r.start
            code = os.waitstatus_to_exitcode(status)
            result = RunResult(r.argv, code if code >= 0 else None, -code if code < 0 else None,
                               r.timed_out, seconds, _read(r.run_dir / "stdout.txt"),
                               _read(r.run_dir / "stderr.txt"), int(usage.ru_maxrss))
            self._fill()
            yield r.key, result
            self._fill()


def _signal(pid: int, sig: int, group: bool) -> None:
    try:
        if group:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def make_runner(mode: str, timeout: float, memory: int) -> Runner:
    if mode == "fork":
        return ForkRunner(timeout, memory)
    if mode == "subprocess":
        return SubprocessRunner(timeout, memory)
    raise ValueError(f"unknown mode {mode!r}: fork or subprocess")
