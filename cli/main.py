"""`webnn-convert`: convert, inspect, validate and run models from the command line.

Commands: convert, inspect, validate, run, ops, zoo (see `webnn-convert COMMAND --help`).
Every command is a thin layer over the library (`converter.validate`, `converter.export`,
`converter.zoo`, the op_mappings registries).

Exit codes: 0 success; 1 validation failure (an output outside tolerance, a zoo model that
fails, a README table that differs from the generated one); 2 unsupported model or bad input
(missing/corrupt file, unsupported op, bad option value). Errors are one message on stderr
naming the file/node/op/rule; `--debug` adds the traceback; `--json` prints machine-readable
results (and errors as {"error": {...}}) on stdout. Progress goes to stderr.
"""

from __future__ import annotations

import json
import shlex
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
import numpy as np

from .commands.support import SOURCES

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
def _handled(debug: bool, as_json: bool) -> Iterator[None]:
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
            message = _plain(exc)
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


def _plain(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"{exc.filename}: no such file or directory"
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.filename}: {exc.strerror or exc}"
    if isinstance(exc, KeyError):
        return f"missing key {exc}"
    return str(exc) or type(exc).__name__


class _Progress:
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


def _progress(enabled: bool) -> _Progress:
    """The progress reporter of a command (callable with a message, see `_Progress`)."""
    return _Progress(enabled)


@contextmanager
def _sigterm_raises() -> Iterator[None]:
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


def _model_options(fn: Callable[..., Any]) -> Callable[..., Any]:
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


def _common(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--json", "as_json", is_flag=True,
                      help="Machine-readable JSON on stdout.")(fn)
    fn = click.option("--debug", is_flag=True, help="Show tracebacks of errors.")(fn)
    return fn


def _progress_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--progress/--no-progress", default=None,
                        help="Progress messages on stderr (default: when it is a terminal).")(fn)


def _want_progress(flag: bool | None, as_json: bool = False) -> bool:
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


def _conversion_kwargs(dims: Sequence[str], shapes: Sequence[str], pins: Sequence[str],
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


def _emit_json(data: Mapping[str, Any]) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=False, default=str))


def _describe(vi: Any) -> str:
    return f"{vi.name} {vi.dtype} {list(vi.shape) if vi.shape is not None else '?'}"


# -- the group ------------------------------------------------------------------------------


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="webnn-converter", prog_name="webnn-convert")
def cli() -> None:
    """Convert ONNX and TFLite models to W3C WebNN graphs, run them, and check that they
    compute what the original model computes."""


@cli.command()
@click.argument("model", type=click.Path())
@click.option("-o", "--output", "outdir", default=None, type=click.Path(file_okay=False),
              help="Folder to write into [default: next to MODEL, named after it: "
                   "models/foo.onnx -> models/foo_webnn]. Created by one rename once every "
                   "file is written; a folder an earlier convert wrote is replaced (no stale "
                   "files); any other non-empty folder needs --force.")
@click.option("--format", "fmt",
              type=click.Choice(["webnn", "webnn-json", "js", "onnx", "all"]),
              default="webnn", show_default=True, help="What to write.")
@click.option("--weights", type=click.Choice(["blob", "safetensors"]), default="blob",
              show_default=True,
              help="Weights of the .webnn/.webnn.json graph: WGWT blob + manifest, or "
                   ".safetensors.")
@click.option("--stem", default=None,
              help="Base name of the files [default: MODEL's file name without its suffix, "
                   "with characters other than A-Z a-z 0-9 _ . - replaced by _: "
                   "foo.webnn, foo.weights, foo.manifest.json, foo.js, foo.html, foo.onnx].")
@click.option("--force", is_flag=True,
              help="Write into a non-empty folder that webnn-convert did not write: files of "
                   "the same names are replaced, nothing else is removed.")
@_model_options
@_progress_option
@_common
def convert(model: str, outdir: str | None, fmt: str, weights: str, stem: str | None,
            force: bool, dims: tuple[str, ...], free_dims: tuple[str, ...],
            shapes: tuple[str, ...], pins: tuple[str, ...], signature: str | None,
            progress: bool | None, debug: bool, as_json: bool) -> None:
    """Convert MODEL (.onnx or .tflite) and write it to a folder (-o, default
    MODEL-STEM_webnn beside MODEL); print the conversion report.

    With --format js or all, serve the folder over HTTP to open the page
    (`python3 -m http.server` in it, then http://localhost:8000/STEM.html): browsers do not
    run it from file://."""
    say = _progress(_want_progress(progress, as_json))
    with _handled(debug, as_json), _sigterm_raises():
        from converter.api import convert
        from converter.export.api import (
            FolderNotOurs,
            check_outdir,
            default_outdir,
            default_stem,
            export,
        )
        from converter.frontends.detect import detect_format

        kwargs = _conversion_kwargs(dims, shapes, pins, signature, free_dims)
        folder = outdir if outdir is not None else str(default_outdir(model))
        name = stem if stem is not None else default_stem(model)
        try:
            check_outdir(folder, force=force)
        except FolderNotOurs as exc:
            raise CommandError(f"{folder}: {exc.reason}; use --force to write into it anyway "
                               "(same-named files are replaced, nothing is removed)"
                               ) from None
        if Path(folder).is_dir() and Path(model).resolve().is_relative_to(
                Path(folder).resolve()):
            raise CommandError(f"{folder}: the output folder contains the model {model}; "
                               "write to another folder (-o)")
        source_format = detect_format(model)
        say(f"converting {model}")
        with say.nodes("converting"):
            result = convert(model, **kwargs, fmt=source_format)
        say(f"writing {fmt} files to {folder}")
        try:
            written = export(result, folder, format=fmt, stem=name, weights=weights,
                             force=force)
        except FolderNotOurs as exc:
            raise CommandError(f"{folder}: {exc.reason}; use --force to write into it anyway"
                               ) from None
        page = next((p for p in written if p.suffix == ".html"), None)
        if as_json:
            _emit_json({"model": model, "format": source_format, "outdir": folder,
                        "stem": name, "files": [str(p) for p in written],
                        "inputs": [{"name": v.name, "dtype": v.dtype,
                                    "shape": list(v.shape or ())} for v in result.inputs],
                        "outputs": [{"name": v.name, "dtype": v.dtype,
                                     "shape": list(v.shape or ())} for v in result.outputs],
                        "operations": len(result.graph.operations),
                        "report": result.report.to_dict()})
            return
        click.echo(f"converted {model} ({source_format}) -> {folder} "
                   f"({len(result.graph.operations)} WebNN operations)")
        for p in written:
            click.echo(f"  wrote {p}")
        if page is not None:
            click.echo(f"  open the page: cd {shlex.quote(folder)} && python3 -m http.server, then "
                       f"http://localhost:8000/{page.name} (not from file://)")
        click.echo("inputs:  " + "; ".join(_describe(v) for v in result.inputs))
        click.echo("outputs: " + "; ".join(_describe(v) for v in result.outputs))
        counts = result.report.counts()
        click.echo("report: " + ", ".join(f"{k} {v}" for k, v in counts.items() if v))
        text = result.report.to_text()
        if text:
            click.echo("\n".join(f"  {line}" for line in text.splitlines()))


@cli.command()
@click.argument("model", type=click.Path())
@click.option("--signature", default=None, metavar="KEY", help="TFLite SignatureDef.")
@_common
def inspect(model: str, signature: str | None, debug: bool, as_json: bool) -> None:
    """Show MODEL's inputs, outputs, free dimensions and op types with their support status,
    without converting it. Exits 2 when an op type is unsupported."""
    with _handled(debug, as_json):
        from converter.validate.inspect import inspect_model

        info = inspect_model(model, signature=signature)
        if as_json:
            _emit_json(info.to_dict())
        else:
            click.echo(info.to_text("cli"))
        if info.unsupported:
            click.echo(f"error: {model}: unsupported op type(s): "
                       f"{', '.join(o.key for o in info.unsupported)}", err=True)
            raise click.exceptions.Exit(EXIT_BAD)


@cli.command()
@click.argument("model", type=click.Path())
@click.option("--inputs", "inputs_file", type=click.Path(dir_okay=False), default=None,
              help=".npz of input arrays by name (overrides the generated ones).")
@click.option("--backend", type=click.Choice(BACKENDS), default="reference",
              show_default=True)
@click.option("--device", type=click.Choice(DEVICES), default="cpu", show_default=True)
@click.option("--rtol", type=float, default=1e-3, show_default=True,
              help="Relative tolerance (times the output's max |ref|).")
@click.option("--atol", type=float, default=1e-3, show_default=True,
              help="Absolute tolerance.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the generated inputs.")
@click.option("--no-locate", is_flag=True,
              help="Do not search for the first diverging node when an output fails.")
@_model_options
@_progress_option
@_common
def validate(model: str, inputs_file: str | None, backend: str, device: str, rtol: float,
             atol: float, seed: int, no_locate: bool, dims: tuple[str, ...],
             free_dims: tuple[str, ...], shapes: tuple[str, ...], pins: tuple[str, ...],
             signature: str | None, progress: bool | None, debug: bool, as_json: bool) -> None:
    """Run MODEL in onnxruntime / LiteRT and the converted graph on a backend with the same
    seeded inputs and compare every output; on failure name the first diverging node."""
    say = _progress(_want_progress(progress, as_json))
    with _handled(debug, as_json):
        from converter.validate import validate as run_validation

        kwargs = _conversion_kwargs(dims, shapes, pins, signature, free_dims)
        overrides = load_npz(inputs_file) if inputs_file else None
        report = run_validation(model, **kwargs, inputs=overrides, seed=seed,
                                backend=backend, device=device, rtol=rtol, atol=atol,
                                locate=not no_locate, progress=say)
        if as_json:
            _emit_json(report.to_dict())
        else:
            click.echo(report.to_text())
        if not report.passed:
            if not as_json:
                failed = [c.name for c in report.outputs if not c.passed]
                where = (f"; {report.divergence.to_text()}" if report.divergence else "")
                click.echo(f"error: {model}: output(s) {', '.join(failed)} outside tolerance"
                           f"{where}", err=True)
            raise click.exceptions.Exit(EXIT_FAIL)


@cli.command()
@click.argument("graph", type=click.Path())
@click.option("--inputs", "inputs_file", required=True, type=click.Path(dir_okay=False),
              help=".npz of input arrays by name.")
@click.option("-o", "--output", "out", required=True, type=click.Path(dir_okay=False),
              help=".npz file to write the outputs to.")
@click.option("--backend", type=click.Choice(BACKENDS), default="reference",
              show_default=True)
@click.option("--device", type=click.Choice(DEVICES), default="cpu", show_default=True)
@_common
def run(graph: str, inputs_file: str, out: str, backend: str, device: str, debug: bool,
        as_json: bool) -> None:
    """Run a converted GRAPH (.webnn file or its folder) on INPUTS and save the outputs.

    The .npz file appears only complete (written beside it under a temporary name, then
    renamed), with the mode the umask gives; errors name OUT, never the temporary file."""
    with _handled(debug, as_json), _sigterm_raises():
        import os
        import tempfile
        import time

        from converter.export.api import current_umask, load
        from converter.validate import compile_graph

        out_path = Path(out)
        out_folder = out_path.absolute().parent
        if not out_folder.is_dir():
            raise CommandError(f"{out}: cannot write the outputs: the folder {out_folder} "
                               "does not exist")
        if not Path(graph).exists():
            raise CommandError(f"{graph}: no such file or directory")
        try:
            g = load(graph)
        except (ValueError, OSError) as exc:
            raise CommandError(f"{graph}: cannot load the graph ({_plain(exc)})") from None
        arrays = load_npz(inputs_file)
        want = g.input_descriptors
        missing = sorted(set(want) - set(arrays))
        extra = sorted(set(arrays) - set(want))
        if missing or extra:
            raise CommandError(f"{inputs_file}: inputs do not match the graph (missing "
                               f"{missing}, unexpected {extra}; the graph takes "
                               f"{sorted(want)})")
        feeds: dict[str, np.ndarray] = {}
        for name, desc in want.items():
            arr = arrays[name]
            if list(arr.shape) != list(desc.shape):
                raise CommandError(f"{inputs_file}: input {name!r} has shape "
                                   f"{list(arr.shape)}, the graph expects {list(desc.shape)}")
            feeds[name] = arr.astype(desc.data_type, copy=False)
        exe = compile_graph(g, backend, device)
        start = time.perf_counter()
        results = exe.run(feeds)
        seconds = time.perf_counter() - start
        tmp: str | None = None
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{out_path.name}.", suffix=".npz",
                                       dir=out_folder)
            saved = {k: np.asarray(v) for k, v in results.items()}
            with os.fdopen(fd, "wb") as f:
                np.savez(f, **saved)  # type: ignore[arg-type]  # (mypy matches allow_pickle)
            os.chmod(tmp, 0o666 & ~current_umask())
            os.replace(tmp, out_path)
        except OSError as exc:  # the message must not name the temporary file
            raise CommandError(f"{out}: cannot write the outputs "
                               f"({exc.strerror or type(exc).__name__})") from None
        finally:
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)
        if as_json:
            _emit_json({"graph": graph, "output": out, "backend": backend, "device": device,
                        "seconds": seconds,
                        "outputs": {k: {"dtype": np.asarray(v).dtype.name,
                                        "shape": list(np.shape(v))}
                                    for k, v in results.items()}})
            return
        click.echo(f"ran {graph} on {backend} ({device}) in {seconds * 1e3:.1f} ms -> {out}")
        for k, v in results.items():
            click.echo(f"  {k}  {np.asarray(v).dtype.name} {list(np.shape(v))}")


@cli.command()
@click.option("--source", type=click.Choice([*SOURCES, "all"]), default="all",
              show_default=True)
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown",
              show_default=True)
@click.option("--check", "check_file", type=click.Path(dir_okay=False), default=None,
              help="Compare the table between the ops-table markers of this file with the "
                   "generated markdown; exit 1 when they differ.")
@click.option("--debug", is_flag=True, help="Show tracebacks of errors.")
def ops(source: str, fmt: str, check_file: str | None, debug: bool) -> None:
    """Print the op support table generated from the mapping registries."""
    with _handled(debug, False):
        from .commands.support import SOURCES, check_readme, render_json, render_markdown

        sources = SOURCES if source == "all" else (source,)
        if check_file is not None:
            try:
                text = Path(check_file).read_text(encoding="utf-8")
            except OSError as exc:
                raise CommandError(_plain(exc)) from None
            try:
                same, diff = check_readme(text, render_markdown(sources))
            except ValueError as exc:
                raise CommandError(f"{check_file}: {exc}") from None
            if not same:
                click.echo(diff)
                click.echo(f"error: {check_file}: the op table differs from the generated one "
                           "(regenerate it with `webnn-convert ops`)", err=True)
                raise click.exceptions.Exit(EXIT_FAIL)
            click.echo(f"{check_file}: op table is up to date")
            return
        text = render_json(sources) if fmt == "json" else render_markdown(sources)
        click.echo(text, nl=False)


@cli.command()
@click.argument("manifests", nargs=-1, type=click.Path(dir_okay=False))
@click.option("-j", "--jobs", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Models validated in parallel (processes).")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default=None,
              help="Write report.json, report.md and report.html into this folder.")
@click.option("--backend", type=click.Choice(BACKENDS), default="reference",
              show_default=True)
@click.option("--device", type=click.Choice(DEVICES), default="cpu", show_default=True)
@click.option("--filter", "filters", multiple=True, metavar="NAME",
              help="Only models whose name contains NAME (repeatable).")
@click.option("--include-slow", is_flag=True, help="Also run entries marked slow.")
@_progress_option
@_common
def zoo(manifests: tuple[str, ...], jobs: int, report_dir: str | None, backend: str,
        device: str, filters: tuple[str, ...], include_slow: bool, progress: bool | None,
        debug: bool, as_json: bool) -> None:
    """Convert and validate every model of the MANIFESTS (default: models/zoo.toml and
    models/zoo_tflite.toml, where they exist) and write the reports."""
    with _handled(debug, as_json):
        from converter.zoo import default_manifests, read_manifests, run_zoo, write_reports

        paths = [Path(m) for m in manifests] or default_manifests()
        if not paths:
            raise CommandError("no manifest given and none of models/zoo.toml, "
                               "models/zoo_tflite.toml exists")
        entries = read_manifests(paths)
        if filters:
            entries = [e for e in entries if any(f.lower() in e.name.lower() for f in filters)]
        skip = {e.name: "slow entry, not run (use --include-slow, or --filter NAME)"
                for e in entries if e.slow and not include_slow and not filters}
        if not entries:
            raise CommandError("no model matches" + (f" --filter {' '.join(filters)}"
                                                     if filters else ""))
        if not _want_progress(progress, as_json):
            report = run_zoo(entries, jobs=jobs, backend=backend, device=device, skip=skip)
        else:
            with click.progressbar(length=len(entries), label="zoo", file=sys.stderr,
                                   show_pos=True, item_show_func=lambda s: s) as bar:
                report = run_zoo(entries, jobs=jobs, backend=backend, device=device, skip=skip,
                                 on_done=lambda name: bar.update(1, name))
        written = write_reports(report, Path(report_dir)) if report_dir else []
        if as_json:
            _emit_json(report.to_dict())
        else:
            click.echo(report.to_text())
            for p in written:
                click.echo(f"wrote {p}")
        if not report.passed:
            raise click.exceptions.Exit(EXIT_FAIL)


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point (`webnn-convert`)."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="webnn-convert")


if __name__ == "__main__":  # pragma: no cover
    main()
