"""What every command shares on its way out: exit codes, one-line errors (warnings held
back), progress on stderr, JSON output, and SIGTERM handling."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import traceback
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn, TextIO

import click

from cli import signals
from converter.api import exception_text, one_line, quoted

EXIT_OK, EXIT_FAIL, EXIT_BAD = 0, 1, 2
EXIT_SIGINT, EXIT_SIGTERM = 130, 143


# -- errors -------------------------------------------------------------------------------


class CommandError(Exception):
    """A user-facing error with its exit code and JSON form."""

    def __init__(self, message: str, code: int = EXIT_BAD, data: dict[str, Any] | None = None
                 ) -> None:
        super().__init__(message)
        self.code = code
        self.data = data or {"reason_code": "bad_input", "message": message}


@contextmanager
def handled(debug: bool, as_json: bool) -> Iterator[None]:
    """Turn library errors into one stderr line (`error: ...`, escaped and shortened by
    `converter.api.one_line`) and an exit code. Within the block SIGTERM raises
    SystemExit(143) (`sigterm_raises`), so `finally` clauses remove temporary output; an
    interruption exits 130 (SIGINT) or 143 (SIGTERM) with one line, never a traceback.

    Python warnings raised within the block are held back (`warnings_shown`): a failure
    prints only its error line; a success prints the notices among them as `warning: ...`
    lines (none with --quiet, unless --debug). With --verbose a last progress line says how
    long the command took."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        failed = True
        try:
            with _errors_reported(debug, as_json):
                yield
            failed = False
        finally:
            if debug or (not failed and verbosity() >= 0):
                warnings_shown(caught, everything=debug)
    if verbosity() > 0:
        click.echo(f"{_prefix(True)} done", err=True)


def warnings_shown(caught: Sequence[warnings.WarningMessage], *, everything: bool) -> None:
    """Print the Python warnings a command raised, held back by `handled`: the notices
    (`UserWarning` and its kin, once each, at most `MAX_WARNINGS`) as `warning: ...` lines;
    with `everything` (--debug) every warning in Python's format. Numeric noise
    (RuntimeWarning: overflow, invalid values, casts) and deprecations are dropped."""
    if everything:
        for w in caught:
            click.echo(warnings.formatwarning(w.message, w.category, w.filename, w.lineno,
                                              w.line).rstrip("\n"), err=True)
        return
    seen: list[str] = []
    for w in caught:
        if not issubclass(w.category, UserWarning) or issubclass(
                w.category, (RuntimeWarning, DeprecationWarning)):
            continue
        text = one_line(str(w.message))
        if text not in seen:
            seen.append(text)
    for text in seen[:MAX_WARNINGS]:
        click.echo(f"warning: {text}", err=True)
    if len(seen) > MAX_WARNINGS:
        click.echo(f"warning: ... and {len(seen) - MAX_WARNINGS} more", err=True)


MAX_WARNINGS = 10
"""How many different warnings a successful command prints."""


@contextmanager
def _errors_reported(debug: bool, as_json: bool) -> Iterator[None]:
    try:
        with sigterm_raises():
            yield
    except (click.exceptions.Exit, click.ClickException, click.Abort):
        raise
    except KeyboardInterrupt:
        report_signal(signal.SIGINT, as_json)
    except SystemExit as exc:
        if exc.code == EXIT_SIGTERM:
            report_signal(signal.SIGTERM, as_json)
        raise
    except Exception as exc:  # noqa: BLE001 - every error becomes a message + exit code
        if signals.received():  # the interruption, turned into another error on its way
            report_signal(signals.received(), as_json)
        if debug:
            traceback.print_exc(file=sys.stderr)
        code, message, data = error_parts(exc)
        _report(message, code, data, as_json)


def error_parts(exc: Exception) -> tuple[int, str, dict[str, Any]]:
    """(exit code, message, JSON form) of an error."""
    from converter.api import ConversionError, out_of_memory

    if isinstance(exc, MemoryError):  # names the budgets that stop a model earlier
        exc = out_of_memory(given_budgets(), "the command")
    if isinstance(exc, CommandError):
        return exc.code, str(exc), exc.data
    if isinstance(exc, ConversionError):
        return EXIT_BAD, exc.render("cli"), exc.to_dict("cli")
    if isinstance(exc, (OSError, ValueError, TypeError, KeyError)):
        message = plain(exc)
        return EXIT_BAD, message, {"reason_code": type(exc).__name__, "message": message}
    if type(exc).__name__ == "MLOperationError":  # a backend could not compile or run
        message = exception_text(exc)
        return EXIT_BAD, message, {"reason_code": "runtime_error", "message": message}
    message = f"internal error: {type(exc).__name__}: {exception_text(exc)}"
    return EXIT_BAD, message, {"reason_code": "internal_error", "message": message}


def _report(message: str, code: int, data: dict[str, Any], as_json: bool) -> NoReturn:
    echo_error(message)
    if as_json:
        click.echo(json.dumps({"error": data}, indent=2))
    raise click.exceptions.Exit(code) from None


def report_signal(sig: int, as_json: bool) -> NoReturn:
    """Exit 128 + `sig` with the one line of an interruption (`error: interrupted` for
    SIGINT, `error: terminated` for SIGTERM), unless this process printed its `error:`
    line already (`cli.signals.mark_announced`, only under the console entry point)."""
    word = "interrupted" if sig == signal.SIGINT else "terminated"
    if signals.mark_announced():
        click.echo(f"error: {word}", err=True)
        if as_json:
            click.echo(json.dumps({"error": {"reason_code": word, "message": word}},
                                  indent=2))
    raise click.exceptions.Exit(128 + sig) from None


def echo_error(message: str) -> None:
    """Print `error: MESSAGE` on stderr as one line (`converter.api.one_line`)."""
    signals.mark_announced()  # an interruption after it adds no second line
    click.echo(f"error: {one_line(message)}", err=True)


def plain(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"{exc.filename}: no such file or directory"
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.filename}: {exc.strerror or exception_text(exc)}"
    if isinstance(exc, KeyError):
        return f"missing key {quoted(exc.args[0]) if exc.args else ''}".rstrip()
    return exception_text(exc)


VERBOSITY_KEY = "webnn_convert.verbosity"
"""Where -q/--quiet (-1) and -v/--verbose (1) of the running command are kept
(`click.Context.meta`, with the time the command started under `STARTED_KEY`)."""
STARTED_KEY = "webnn_convert.started"


def verbosity() -> int:
    """-1 with -q/--quiet, 1 with -v/--verbose, else 0 (also outside a command)."""
    ctx = click.get_current_context(silent=True)
    return int(ctx.meta.get(VERBOSITY_KEY, 0)) if ctx is not None else 0


def _prefix(timed: bool) -> str:
    """"[webnn-convert]", with the seconds since the command started when `timed`."""
    ctx = click.get_current_context(silent=True)
    started = ctx.meta.get(STARTED_KEY) if ctx is not None else None
    if not timed or started is None:
        return "[webnn-convert]"
    return f"[webnn-convert {time.monotonic() - started:.2f}s]"


class Progress:
    """Progress on stderr, silent unless `enabled`: `say(message)` prints one line (with
    `verbose`, prefixed with the seconds since the command started, so each step's time
    shows); `nodes(label)` shows a bar over the source nodes the importer converts within
    the block (`converter.api.IMPORT_PROGRESS`). click hides the bar when stderr is
    not a terminal (it prints the label once)."""

    def __init__(self, enabled: bool, verbose: bool = False) -> None:
        self.enabled = enabled
        self.verbose = verbose

    def __call__(self, message: str) -> None:
        if self.enabled:
            click.echo(f"{_prefix(self.verbose)} {message} ...", err=True)

    @contextmanager
    def nodes(self, label: str) -> Iterator[None]:
        if not self.enabled:
            yield
            return
        from converter.api import IMPORT_PROGRESS

        bars: list[Any] = []

        def update(done: int, total: int) -> None:
            if not bars:
                bars.append(click.progressbar(length=total, label=label, file=sys.stderr,
                                              show_pos=True, show_eta=False,
                                              update_min_steps=max(1, total // 200)))
            bar = bars[0]
            bar.update(done - bar.pos)

        token = IMPORT_PROGRESS.set(update)
        try:
            yield
        finally:
            IMPORT_PROGRESS.reset(token)
            if bars:
                bars[0].render_progress()  # the last steps may not have been drawn
                bars[0].render_finish()
            if self.verbose and bars:
                click.echo(f"{_prefix(True)} {label}: {bars[0].pos} source nodes", err=True)


def progress_reporter(enabled: bool) -> Progress:
    """The progress reporter of a command (callable with a message, see `Progress`); with
    -v/--verbose its lines carry timings."""
    return Progress(enabled, verbose=verbosity() > 0)


# -- a reader that stops reading ------------------------------------------------------------


class QuietPipe:
    """A stand-in for sys.stdout that goes quiet when the reader closes its end (`... |
    head -1`): the write or flush that meets the closed pipe (BrokenPipeError) points file
    descriptor 1 at os.devnull and every later write lands there, so the command finishes
    its work and exits with its own status, and the interpreter's last flush cannot fail.
    Everything else is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._silence()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._silence()

    def _silence(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)
        try:
            self._stream.flush()  # what was buffered goes to os.devnull
        except OSError:
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def stdout_may_close() -> Iterator[None]:
    """Within the block, sys.stdout is a `QuietPipe` (a closed stdout ends quietly)."""
    real = sys.stdout
    if real is None or isinstance(real, QuietPipe):
        yield
        return
    sys.stdout = QuietPipe(real)
    try:
        yield
    finally:
        sys.stdout = real
        try:
            real.flush()
        except BrokenPipeError:
            QuietPipe(real)._silence()
        except (OSError, ValueError):
            pass


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises SystemExit(143) (so `finally` clauses, such as the
    export's removal of its temporary folder, run) instead of killing the process. Under
    the console entry point (`cli.signals` installed) the process-lifetime handler already
    does so: nothing changes then."""
    if signals.installed():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def emit_json(data: Mapping[str, Any]) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=False, default=str))


def describe(vi: Any) -> str:
    return f"{vi.name} {vi.dtype} {list(vi.shape) if vi.shape is not None else '?'}"


BUDGETS_KEY = "webnn_convert.budgets"
"""Where the budget flags of the running command are kept (`click.Context.meta`)."""


def given_budgets() -> Any:
    """The `converter.api.Budgets` of the budget flags given to the running command
    (defaults for the others)."""
    from converter.api import Budgets

    ctx = click.get_current_context(silent=True)
    values = ctx.meta.get(BUDGETS_KEY, {}) if ctx is not None else {}
    return Budgets(**values)
