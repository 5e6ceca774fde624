"""SIGINT / SIGTERM for the whole life of the `webnn-convert` process (`cli.entry`).

`install()` (the first thing the entry point does, before the heavy imports) sets one handler
for both signals that RECORDS the first signal and RAISES only where raising is safe: inside
`raising_call(fn)` (the import of the CLI, a command's invocation), KeyboardInterrupt for
SIGINT and SystemExit(143) for SIGTERM, so that `finally` clauses remove temporary output
and `cli.output.handled` prints its one line. Elsewhere (click's argument parsing, the way
out) a signal is only recorded: `raising_call` raises a recorded one on entry, and `finish`
ends the process with 130 / 143 and one `error: interrupted` / `error: terminated` line
whenever a signal was recorded, even one that arrived after the result was printed.

Rules: the first signal decides the exit code (SIGINT 130, SIGTERM 143); a signal during an
import (the CLI's own at start-up, a front end's later) raises once the import is done (a
thread delivers it again every `REDELIVER_S`): onnx's nanobind extension turns an exception
raised while it initializes into a C++ abort; only one exception is raised per process (a second Ctrl-C does not interrupt the clean-up the first started);
a third signal ends the process at once (its line, 128 + the first signal; temporary output
may remain). A signal ignored when the process started (`nohup`, `cmd &` in a script) stays
ignored. `finish` runs the atexit functions, flushes the streams, blocks both signals and
leaves with `os._exit` (no interpreter shutdown, during which Python would restore the
default actions and a signal would kill the process without a line): a signal that arrives
after that point (the last microseconds) is lost, as it is for any exiting process.

Without `install()` (the library, click's test runner) nothing here changes anything:
`raising_call` just calls, `announced` is always False.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any, NoReturn, TypeVar

T = TypeVar("T")

SIGNALS = (signal.SIGINT, signal.SIGTERM)
WORDS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}
HARD_EXIT_COUNT = 3
"""The signal that ends the process at once, without clean-up."""


class _State:
    """What the handler has seen (one per process)."""

    installed = False
    first = 0  # the first signal received (0: none)
    count = 0  # signals received
    raised = False  # an exception was raised for the first signal
    announced = False  # an `error:` line was printed
    redelivering = False  # a thread delivers the first signal again (`_deliver_again_soon`)
    pid = 0


_STATE = _State()


def install() -> None:
    """Handle SIGINT and SIGTERM as the module docstring says, for the rest of the process;
    then unblock both (a parent's blocked mask would keep them pending forever). Call it in
    the main thread, before anything slow."""
    _STATE.installed = True
    _STATE.pid = os.getpid()
    for sig in SIGNALS:
        if signal.getsignal(sig) != signal.SIG_IGN:
            signal.signal(sig, _on_signal)
    sys.unraisablehook = _unraisable(sys.unraisablehook)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)


def installed() -> bool:
    """Whether `install()` set the handlers of this process."""
    return _STATE.installed and _STATE.pid == os.getpid()


def received() -> int:
    """The first signal this process received (0: none, or `install()` was not called). An
    error raised after it may be the interruption in disguise (a C extension's import turns
    KeyboardInterrupt into ImportError): callers report the signal instead."""
    return _STATE.first if installed() else 0


def exception_for(sig: int) -> BaseException:
    """What a signal raises: KeyboardInterrupt for SIGINT, SystemExit(128 + sig) otherwise."""
    return KeyboardInterrupt() if sig == signal.SIGINT else SystemExit(128 + sig)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    state = _STATE
    if state.pid != os.getpid():  # a forked child before it reset its handlers
        raise exception_for(signum)
    if not state.first:
        state.first = signum
    state.count += 1
    if state.count >= HARD_EXIT_COUNT:
        _hard_exit()
    if state.raised:
        return
    where = _where(frame)
    if where == _RAISE:
        state.raised = True
        raise exception_for(state.first)
    if where == _LATER:
        _deliver_again_soon()


_RAISE, _LATER, _RECORD = 1, 2, 3


def _where(frame: FrameType | None) -> int:
    """_RAISE within `raising_call`; _LATER there but during an import (an extension
    module's initialization that calls back into Python turns an exception into a C++
    abort: onnx's nanobind does); _RECORD elsewhere."""
    importing = False
    while frame is not None:
        code = frame.f_code
        if code is _RAISING_CODE:
            return _LATER if importing else _RAISE
        if code is _IMPORT_CODE:
            importing = True
        frame = frame.f_back
    return _RECORD


def _deliver_again_soon() -> None:
    """Deliver the first signal again every `REDELIVER_S` until it has raised (or the
    process ends): a thread that simulates it (`_thread.interrupt_main`)."""
    if _STATE.redelivering:
        return
    _STATE.redelivering = True
    import threading
    import time

    def again() -> None:
        while not _STATE.raised:
            time.sleep(REDELIVER_S)
            if not _STATE.raised:
                _STATE.count -= 1  # the same signal again: not one more
                import _thread

                _thread.interrupt_main(signal.Signals(_STATE.first))
        _STATE.redelivering = False

    threading.Thread(target=again, name="signal-redelivery", daemon=True).start()


REDELIVER_S = 0.02
"""How often a signal that arrived during an import is delivered again."""


def raising_call(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)`, during which a signal raises (KeyboardInterrupt / SystemExit(143)); a
    signal recorded before raises at once. The caller must catch both around the call."""
    state = _STATE
    if installed() and state.first and not state.raised:
        state.raised = True
        raise exception_for(state.first)
    return fn(*args)


_RAISING_CODE = raising_call.__code__
_IMPORT_CODE = importlib._bootstrap._find_and_load.__code__  # type: ignore[attr-defined]


def _unraisable(previous: Callable[[Any], object]) -> Callable[[Any], object]:
    """An unraisable hook that drops the signal exception Python swallowed (raised while a
    finalizer ran) and delivers the signal again, so that it still interrupts."""

    def hook(unraisable: Any) -> None:
        exc = unraisable.exc_value
        state = _STATE
        if state.first and state.raised and isinstance(exc, (KeyboardInterrupt, SystemExit)):
            state.raised = False  # from another thread: a signal raised here is lost again
            _deliver_again_soon()
            return
        previous(unraisable)

    return hook


def mark_announced() -> bool:
    """Note that an `error:` line is printed now; False when one was printed before (the
    caller prints nothing then). Always True without `install()`."""
    if not installed():
        return True
    first = not _STATE.announced
    _STATE.announced = True
    return first


def _line(sig: int) -> bytes:
    return f"error: {WORDS.get(signal.Signals(sig), 'interrupted')}\n".encode()


def _hard_exit() -> NoReturn:
    first = _STATE.first
    if mark_announced():
        try:
            os.write(2, _line(first))
        except OSError:
            pass
    os._exit(128 + first)


def finish(code: int) -> NoReturn:
    """End the process: the atexit functions, the streams flushed, then `os._exit` with
    `code`, or with 128 + the first signal (and its one line, unless an error line was
    printed) when a signal was received at any time before."""
    import atexit

    try:
        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001 - on the way out: nothing left to report it to
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - a closed pipe: the output is gone anyway
            pass
    signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    _settle()  # a handler still due (the signal taken by another thread) runs now
    pending = signal.sigpending()
    for sig in SIGNALS:
        if sig in pending and not _STATE.first:
            _STATE.first = sig
    first = _STATE.first
    if first:
        code = 128 + first
        if mark_announced():
            try:
                os.write(2, _line(first))
            except OSError:
                pass
    os._exit(code)


def _settle() -> None:
    for _ in range(3):
        _noop()


def _noop() -> None:
    return None


__all__ = ["SIGNALS", "exception_for", "finish", "install", "installed", "mark_announced",
           "raising_call", "received"]
