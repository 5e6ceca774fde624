"""Running native code that may crash in a forked child, so that a crash is one clean error.

The reference frameworks (LiteRT, onnxruntime) are native code that a hostile model can make
crash (a SIGSEGV in `invoke()`, an abort) in ways no check before them can foresee. `isolated`
runs a function in a child made with `os.fork` (cheap: the child shares the parent's memory
copy-on-write, with the framework already imported, so nothing is re-imported), and the child
sends back what the function returned, or the exception it raised, pickled through a pipe.
When the child dies instead (a signal, or an exit without a result), `NativeCrash` is raised:
"LiteRT crashed running m/x.tflite (SIGSEGV): the model is malformed or hits a LiteRT bug".

Restrictions:
- where `os.fork` does not exist (Windows) the function runs in this process, unprotected;
- the result must pickle; it is sent once (the parent briefly holds the pickled bytes and the
  unpickled value: twice the result's size; callers bound the result, e.g. a reference run's
  outputs by the run-memory budget, `converter/core/webnn/run_memory.py`);
- an exception that does not survive pickling (a constructor with required keyword-only
  arguments) comes back as `ReferenceFailed` carrying its type name and message;
- the child inherits resource limits (RLIMIT_AS) and runs with SIGINT/SIGTERM at their default
  actions and faulthandler off (a crash prints nothing); when this process is interrupted
  while it waits, the child is killed (SIGKILL) and reaped before the interruption goes on;
- fork copies only the calling thread: a function must not need a lock another thread of
  this process may hold (the frameworks create their thread pools inside the child).
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from converter.core.errors import ReferenceFailed

T = TypeVar("T")

_OK, _RAISED, _TEXT = 0, 1, 2


class NativeCrash(ReferenceFailed):
    """The native code run by `isolated` killed its process (a signal, or an exit without a
    result): the model is malformed or hits a bug of the framework."""


def can_isolate() -> bool:
    """Whether `isolated` runs functions in a child process here (`os.fork` exists)."""
    return hasattr(os, "fork")


def signal_name(number: int) -> str:
    """`SIGSEGV` for signal 11; `signal N` for a number that names none."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


_INTERRUPTS = (signal.SIGINT, signal.SIGTERM)


def _reaped(pid: int, options: int) -> int | None:
    """The wait status of child `pid` once reaped (`os.waitpid`), None while it runs (with
    WNOHANG)."""
    reaped, status = os.waitpid(pid, options)
    return status if reaped == pid else None


def _kill_and_reap(pid: int) -> None:
    """Kill child `pid` (SIGKILL) and reap it, unless it was reaped already (its pid may
    then belong to another process: it is never signalled)."""
    try:
        if _reaped(pid, os.WNOHANG) is not None:
            return
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):  # reaped before
        pass


def run_child(write_fd: int, mask: Any, produce: Callable[[], bytes],
              setup: Callable[[], None] | None = None) -> NoReturn:  # pragma: no cover
    """The body of a forked child: `setup()`, then SIGINT/SIGTERM back to their default
    actions before `mask` (the parent's signal mask, saved when it blocked them across the
    fork) is restored, so a signal pending since the fork never runs the parent's handler
    here; faulthandler off (a crash prints nothing: the parent reports it); then the bytes of
    `produce()` written to `write_fd`. Never returns: exit code 0, or 70 when no result was
    written (the parent reports the exit code). Shared by `isolated` and the zoo's
    `converter.zoo.isolation`."""
    code = 0
    try:
        if setup is not None:
            setup()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        import faulthandler

        faulthandler.disable()
        payload = produce()
        with os.fdopen(write_fd, "wb", closefd=True) as out:
            out.write(payload)
    except BaseException:  # noqa: BLE001 - no result: the parent reports the exit code
        code = 70
    finally:
        os._exit(code)


def _result_payload(fn: Callable[[], Any]) -> bytes:  # pragma: no cover - in the child
    """`fn()`'s result, or the exception it raised, pickled for `isolated`."""
    try:
        return pickle.dumps((_OK, fn()), protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
        return _exception_payload(exc)


def _exception_payload(exc: BaseException) -> bytes:
    try:
        data = pickle.dumps((_RAISED, exc), protocol=pickle.HIGHEST_PROTOCOL)
        pickle.loads(data)  # it must come back as it was raised
        return data
    except Exception:  # noqa: BLE001 - not picklable: its type and message instead
        from converter.core.errors import exception_text

        return pickle.dumps((_TEXT, f"{type(exc).__name__}: {exception_text(exc)}"))


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def isolated(fn: Callable[[], T], *, framework: str, label: str) -> T:
    """`fn()` run in a forked child: its result, or the exception it raised (re-raised
    here); `NativeCrash` ("`framework` crashed running `label` (SIGSEGV): ...") when the
    child dies without a result. Without `os.fork`, `fn()` in this process."""
    if not can_isolate():
        return fn()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, ValueError, OSError):  # closed or replaced streams
            pass
    read_fd, write_fd = os.pipe()
    # SIGINT/SIGTERM wait while the process forks: the child must not run this process's
    # handlers before it has set its own (`run_child`)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _INTERRUPTS)
    try:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(read_fd)
            run_child(write_fd, mask, lambda: _result_payload(fn))
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    status: int | None = None
    try:
        os.close(write_fd)
        with os.fdopen(read_fd, "rb", closefd=True) as pipe:
            data = _read_all(pipe.fileno())
        status = _reaped(pid, 0)
    finally:
        if status is None:  # interrupted while waiting: the child goes too
            _kill_and_reap(pid)
    assert status is not None  # the child was reaped, or the interruption went on
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        how = signal_name(-code)
    elif code or not data:
        how = f"exit code {code}"
    else:
        kind, value = pickle.loads(data)
        if kind == _OK:
            return value  # type: ignore[no-any-return]
        if kind == _RAISED:
            raise value
        raise ReferenceFailed(f"{framework} failed running {label}: {value}")
    article = "an" if framework[:1].lower() in "aeiou" else "a"
    raise NativeCrash(f"{framework} crashed running {label} ({how}): the model is malformed "
                      f"or hits {article} {framework} bug")
