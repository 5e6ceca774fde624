"""What every command shares: exit codes, one-line errors, progress on stderr, JSON output,
and the parsing of the options several commands take."""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import click
import numpy as np

EXIT_OK, EXIT_FAIL, EXIT_BAD = 0, 1, 2
BACKENDS = ("reference", "onnxruntime", "torch")
DEVICES = ("cpu", "cuda")


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
    """Turn library errors into one stderr message and an exit code."""
    from converter.errors import ConversionError

    try:
        yield
    except (click.exceptions.Exit, click.ClickException, click.Abort):
        raise
    except Exception as exc:  # noqa: BLE001 - every error becomes a message + exit code
        if isinstance(exc, CommandError):
            code, message, data = exc.code, str(exc), exc.data
        elif isinstance(exc, ConversionError):
            code, message, data = EXIT_BAD, exc.render("cli"), exc.to_dict("cli")
        elif isinstance(exc, (OSError, ValueError, TypeError, KeyError)):
            message = plain(exc)
            code, data = EXIT_BAD, {"reason_code": type(exc).__name__, "message": message}
        else:
            message = f"internal error: {type(exc).__name__}: {exc}"
            code, data = EXIT_BAD, {"reason_code": "internal_error", "message": message}
        if debug:
            traceback.print_exc(file=sys.stderr)
        click.echo(f"error: {message}", err=True)
        if as_json:
            click.echo(json.dumps({"error": data}, indent=2))
        raise click.exceptions.Exit(code) from None


def plain(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"{exc.filename}: no such file or directory"
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.filename}: {exc.strerror or exc}"
    if isinstance(exc, KeyError):
        return f"missing key {exc}"
    return str(exc) or type(exc).__name__


class Progress:
    """Progress on stderr, silent unless `enabled`: `say(message)` prints one line;
    `nodes(label)` shows a bar over the source nodes the importer converts within the block
    (`converter.importer.IMPORT_PROGRESS`). click hides the bar when stderr is not a
    terminal (it prints the label once)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, message: str) -> None:
        if self.enabled:
            click.echo(f"[webnn-convert] {message} ...", err=True)

    @contextmanager
    def nodes(self, label: str) -> Iterator[None]:
        if not self.enabled:
            yield
            return
        from converter.importer import IMPORT_PROGRESS

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


def progress_reporter(enabled: bool) -> Progress:
    """The progress reporter of a command (callable with a message, see `Progress`)."""
    return Progress(enabled)


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises SystemExit(143) (so `finally` clauses, such as the
    export's removal of its temporary folder, run) instead of killing the process."""
    import signal

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


# -- option parsing -----------------------------------------------------------------------


def _split(option: str, item: str) -> tuple[str, str]:
    name, sep, value = item.partition("=")
    if not sep or not name:
        raise click.BadParameter(f"{item!r}: expected NAME=VALUE", param_hint=option)
    return name, value


def parse_dims(items: Sequence[str], *, named_only: bool = False
               ) -> tuple[dict[str, int], dict[str, dict[int, int]]]:
    """--dim NAME=VALUE (a named free dimension) or --dim INPUT:AXIS=VALUE (one axis of an
    input, e.g. an unnamed dimension); VALUE a positive integer, AXIS an integer (negative
    counts from the end). With `named_only` (--free-dim) every NAME is a dimension name,
    also one of the INPUT:AXIS form. Returns (free_dims, input_dims)."""
    option = "--free-dim" if named_only else "--dim"
    named: dict[str, int] = {}
    axes: dict[str, dict[int, int]] = {}
    for item in items:
        name, value = _split(option, item)
        try:
            n = int(value)
        except ValueError:
            n = 0
        if n < 1:
            raise click.BadParameter(f"{item!r}: VALUE must be a positive integer",
                                     param_hint=option)
        target, sep, axis = name.rpartition(":")
        if named_only or not sep or not target or not _is_int(axis):
            if named.get(name, n) != n:
                raise click.BadParameter(f"{item!r}: {name!r} is given twice "
                                         f"({named[name]} and {n})", param_hint=option)
            named[name] = n
            continue
        per_input = axes.setdefault(target, {})
        if per_input.get(int(axis), n) != n:
            raise click.BadParameter(f"{item!r}: axis {axis} of {target!r} is given twice "
                                     f"({per_input[int(axis)]} and {n})", param_hint=option)
        per_input[int(axis)] = n
    return named, axes


def _is_int(text: str) -> bool:
    return text.lstrip("-").isdigit() and text.count("-") <= 1


def parse_shapes(items: Sequence[str]) -> dict[str, list[int]]:
    """--shape INPUT=D1,D2,... (positive integers; INPUT= for a scalar)."""
    out: dict[str, list[int]] = {}
    for item in items:
        name, value = _split("--shape", item)
        try:
            dims = [int(d) for d in value.split(",")] if value.strip() else []
        except ValueError:
            dims = [0]
        if any(d < 1 for d in dims):
            raise click.BadParameter(f"{item!r}: dimensions must be positive integers "
                                     "separated by commas", param_hint="--shape")
        out[name] = dims
    return out


def parse_pins(items: Sequence[str]) -> dict[str, Any]:
    """--pin INPUT=VALUE: a number, a comma-separated or JSON list, or @FILE.npy."""
    out: dict[str, Any] = {}
    for item in items:
        name, value = _split("--pin", item)
        try:
            if value.startswith("@"):
                out[name] = np.load(value[1:], allow_pickle=False)
            elif value.strip().startswith("["):
                out[name] = np.asarray(json.loads(value))
            else:
                parts = [json.loads(p) for p in value.split(",")]
                out[name] = np.asarray(parts[0] if len(parts) == 1 else parts)
        except (OSError, ValueError) as exc:
            raise click.BadParameter(f"{item!r}: VALUE must be a number, a list or @FILE.npy "
                                     f"({exc})", param_hint="--pin") from None
    return out


def load_npz(path: str) -> dict[str, np.ndarray]:
    """Arrays of an .npz file by name (no pickles)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if not hasattr(data, "files"):
                raise CommandError(f"{path}: expected an .npz archive of named arrays")
            return {k: np.asarray(data[k]) for k in data.files}
    except CommandError:
        raise
    except FileNotFoundError:
        raise CommandError(f"{path}: no such file") from None
    except (OSError, ValueError, EOFError) as exc:
        raise CommandError(f"{path}: not a readable .npz file ({exc or type(exc).__name__})"
                           ) from None


def model_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    for deco in reversed([
        click.option("--dim", "dims", multiple=True, metavar="NAME=VALUE|INPUT:AXIS=VALUE",
                     help="Fix a named free dimension (ONNX dim_param), e.g. batch=1, or one "
                          "axis of an input (unnamed or TFLite -1 dimensions), e.g. x:0=1."),
        click.option("--free-dim", "free_dims", multiple=True, metavar="NAME=VALUE",
                     help="Fix a named free dimension, even one whose name looks like "
                          "INPUT:AXIS."),
        click.option("--shape", "shapes", multiple=True, metavar="INPUT=D1,D2,...",
                     help="Fix the whole shape of an input."),
        click.option("--pin", "pins", multiple=True, metavar="INPUT=VALUE",
                     help="Replace an ONNX input by a constant (number, list or @FILE.npy)."),
        click.option("--signature", default=None, metavar="KEY",
                     help="TFLite SignatureDef to convert (names become its aliases)."),
    ]):
        fn = deco(fn)
    return fn


def common_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--json", "as_json", is_flag=True,
                      help="Machine-readable JSON on stdout.")(fn)
    fn = click.option("--debug", is_flag=True, help="Show tracebacks of errors.")(fn)
    return fn


def progress_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--progress/--no-progress", default=None,
                        help="Progress messages on stderr (default: when it is a terminal).")(fn)


def want_progress(flag: bool | None, as_json: bool = False) -> bool:
    """--progress/--no-progress when given; else on when stderr is a terminal and the
    output is not --json."""
    if flag is not None:
        return flag
    if as_json:
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def conversion_kwargs(dims: Sequence[str], shapes: Sequence[str], pins: Sequence[str],
                       signature: str | None, free_dims: Sequence[str] = ()
                       ) -> dict[str, Any]:
    """The keyword arguments of `converter.convert()` / `validate()` for the model options
    (--dim, --free-dim, --shape, --pin, --signature); a one-line CommandError for bad
    syntax or a dimension given two values."""
    try:
        named, axes = parse_dims(dims)
        explicit, _ = parse_dims(free_dims, named_only=True)
        for name, n in explicit.items():
            if named.get(name, n) != n:
                raise click.BadParameter(f"{name!r} is given twice ({named[name]} and {n})",
                                         param_hint="--dim/--free-dim")
            named[name] = n
        return {"free_dims": named or None, "input_dims": axes or None,
                "input_shapes": parse_shapes(shapes) or None,
                "pin_inputs": parse_pins(pins) or None, "signature": signature}
    except click.BadParameter as exc:
        raise CommandError(exc.format_message()) from None


def emit_json(data: Mapping[str, Any]) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=False, default=str))


def describe(vi: Any) -> str:
    return f"{vi.name} {vi.dtype} {list(vi.shape) if vi.shape is not None else '?'}"
