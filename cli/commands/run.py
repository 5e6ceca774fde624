"""`webnn-convert run`: execute an exported graph on inputs from an .npz file."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

import click
import numpy as np

from cli.help import GroupedHelp
from cli.options import (
    BACKENDS,
    DEVICES,
    allow_root_option,
    budget_options,
    common_options,
    precision_option,
)
from cli.output import CommandError, emit_json, given_budgets, handled, plain, sigterm_raises
from cli.values import load_npz
from converter.api import quoted


@click.command(cls=GroupedHelp, first=("inputs_file", "out", "backend", "device", "precision"))
@click.argument("graph", type=click.Path())
@click.option("--inputs", "inputs_file", required=True, type=click.Path(dir_okay=False),
              help=".npz of input arrays by name.")
@click.option("-o", "--output", "out", default=None, type=click.Path(dir_okay=False),
              help=".npz file to write the outputs to [default: none; the outputs are "
                   "printed: name, data type, shape and the first values].")
@click.option("--backend", type=click.Choice(BACKENDS), default="reference",
              show_default=True)
@click.option("--device", type=click.Choice(DEVICES), default="cpu", show_default=True)
@precision_option
@budget_options("max_constant_bytes", "max_tensor_bytes", "max_run_bytes", "max_manifest_bytes")
@allow_root_option
@common_options
def run(graph: str, inputs_file: str, out: str | None, backend: str, device: str, precision: str,
        allow_roots: tuple[str, ...], debug: bool, as_json: bool) -> None:
    """Run a converted GRAPH (.webnn file or its folder) on INPUTS and save the outputs (-o)
    or print them. An export with host steps (`<stem>.host.json`, docs/host-steps.md) runs
    as a whole: the graph, then its host steps; the outputs are the model's.

    Without -o every output is printed (name, data type, shape, the first values; --json:
    the values as lists). The .npz file of -o appears only complete (written beside it under a temporary name, then
    renamed), with the mode the umask gives; errors name OUT, never the temporary file.
    A graph over the run budgets (--max-tensor-bytes, --max-run-bytes) is refused before
    the inputs are read; --max-constant-bytes bounds each input array of the .npz file.
    --precision float16 runs the graph with its float32 weights and operations in float16
    (inputs and outputs stay float32). Inputs and outputs a target narrowed (int64 carried
    as int32) or widened take and give the caller-side type: int64 values are checked to fit."""
    with handled(debug, as_json), sigterm_raises():
        from converter.api import check_run_memory, load_model, using_budgets

        out_path = Path(out) if out is not None else None
        out_folder = out_path.absolute().parent if out_path is not None else None
        if out_folder is not None and not out_folder.is_dir():
            raise CommandError(f"{out}: cannot write the outputs: the folder {out_folder} "
                               "does not exist")
        if not Path(graph).exists():
            raise CommandError(f"{graph}: no such file or directory")
        source = source_model(graph)
        if source is not None:
            raise CommandError(_convert_first(graph, f"is {source}"))
        try:
            with using_budgets(given_budgets()):  # --max-manifest-bytes
                model = load_model(graph, allow_roots=allow_roots)  # + state, host steps
            g = model.graph
        except (ValueError, OSError) as exc:
            source = source_model(graph, by_suffix=True)
            if source is not None:  # a damaged or unusual model file
                raise CommandError(_convert_first(graph, f"is named like {source}")
                                   ) from None
            raise CommandError(f"{graph}: cannot load the graph ({plain(exc)})") from None
        if precision != "float32":
            import dataclasses

            from converter.api import to_precision

            g = to_precision(g, precision).graph
            model = dataclasses.replace(model, graph=g, _sessions={})
        budgets = given_budgets()
        check_run_memory(g, budgets, what=f"running {graph}")
        arrays = load_npz(inputs_file)
        if model.host is not None:  # the whole pipeline: graph, then host steps
            results, seconds = _run_pipeline(model, arrays, inputs_file, backend, device,
                                             budgets)
        else:
            results, seconds = _run_graph(g, arrays, inputs_file, backend, device, budgets)
        if out_path is not None:
            for name in results:
                problem = npz_name_problem(name)
                if problem:
                    raise CommandError(f"{out}: cannot write output {quoted(name)} to an .npz "
                                       f"file: {problem}")
        if out_path is None or out_folder is None:
            _show_outputs(graph, backend, device, precision, seconds, results, as_json)
            return
        _write_outputs(graph, out, out_path, out_folder, backend, device, precision, seconds,
                       results, as_json)


def _run_pipeline(model: Any, arrays: Mapping[str, np.ndarray], inputs_file: str,
                  backend: str, device: str, budgets: Any
                  ) -> tuple[dict[str, np.ndarray], float]:
    """The outputs of a loaded model with host steps (graph, then host steps) and the
    seconds of the run (compilation included)."""
    import time

    from converter.api import InvalidModel, using_budgets

    want = model.input_names
    missing = sorted(set(want) - set(arrays))
    extra = sorted(set(arrays) - set(want))
    if missing or extra:
        raise CommandError(f"{inputs_file}: inputs do not match the model (missing "
                           f"{missing}, unexpected {extra}; the model takes {sorted(want)})")
    start = time.perf_counter()
    try:
        with using_budgets(budgets):
            results = model.run(arrays, backend, device=device)
    except InvalidModel as exc:
        raise CommandError(f"{inputs_file}: {exc}") from None
    return results, time.perf_counter() - start


def _run_graph(g: Any, arrays: Mapping[str, np.ndarray], inputs_file: str, backend: str,
               device: str, budgets: Any) -> tuple[dict[str, np.ndarray], float]:
    """The outputs of a bare graph and the seconds of the run itself."""
    import time

    from converter.api import (
        InvalidModel,
        compile_graph,
        loaded_feeds,
        loaded_outputs,
        using_budgets,
    )

    want = g.input_descriptors
    missing = sorted(set(want) - set(arrays))
    extra = sorted(set(arrays) - set(want))
    if missing or extra:
        raise CommandError(f"{inputs_file}: inputs do not match the graph (missing "
                           f"{missing}, unexpected {extra}; the graph takes "
                           f"{sorted(want)})")
    for name, desc in want.items():
        arr = arrays[name]
        if list(arr.shape) != list(desc.shape):
            raise CommandError(f"{inputs_file}: input {name!r} has shape "
                               f"{list(arr.shape)}, the graph expects {list(desc.shape)}")
    try:  # narrowed int64 inputs (sourceDataTypes of the export) range-checked
        feeds = loaded_feeds(g, arrays)
    except InvalidModel as exc:
        raise CommandError(f"{inputs_file}: {exc}") from None
    with using_budgets(budgets):  # compile_graph checks the run budgets again
        exe = compile_graph(g, backend, device)
    start = time.perf_counter()
    results = exe.run(feeds)
    seconds = time.perf_counter() - start
    return loaded_outputs(g, results), seconds  # narrowed int64 outputs back to int64


def _write_outputs(graph: str, out: str | None, out_path: Path, out_folder: Path, backend: str,
                   device: str, precision: str, seconds: float,
                   results: Mapping[str, np.ndarray], as_json: bool) -> None:
    """Write `results` to the .npz file `out_path` (complete or not at all) and say so."""
    import os
    import tempfile

    from converter.api import current_umask

    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{out_path.name}.", suffix=".npz",
                                   dir=out_folder)
        with os.fdopen(fd, "wb") as f:
            write_npz(f, results)
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, out_path)
    except OSError as exc:  # the message must not name the temporary file
        raise CommandError(f"{out}: cannot write the outputs "
                           f"({exc.strerror or type(exc).__name__})") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    if as_json:
        emit_json({"graph": graph, "output": out, "backend": backend, "device": device,
                    "precision": precision,
                    "seconds": seconds,
                    "outputs": {k: {"dtype": np.asarray(v).dtype.name,
                                    "shape": list(np.shape(v))}
                                for k, v in results.items()}})
        return
    click.echo(f"ran {graph} on {backend} ({device}) in {seconds * 1e3:.1f} ms -> {out}")
    for k, v in results.items():
        click.echo(f"  {k}  {np.asarray(v).dtype.name} {list(np.shape(v))}")


def npz_name_problem(name: str) -> str | None:
    """Why output `name` cannot be an entry `NAME.npy` of an .npz file read back under the
    same name (`numpy.load`), None when it can: an empty name, a path separator (`/`,
    `\\`), a `.` or `..` name (a zip tool would write outside its folder) or a control
    character. Every other name is kept exactly (`allow_pickle`, `file`, any Unicode)."""
    if not name:
        return "the name is empty"
    if "/" in name or "\\" in name:
        return "the name holds a path separator"
    if name in (".", ".."):
        return "the name is a folder name"
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name):
        return "the name holds a control character"
    return None


def write_npz(f: BinaryIO, arrays: Mapping[str, Any]) -> None:
    """Write `arrays` to `f` as an .npz archive (uncompressed, as `numpy.savez` writes: one
    `NAME.npy` entry per array, no pickles), names as given; they must pass
    `npz_name_problem` (a ValueError otherwise). Unlike `numpy.savez(f, **arrays)`, names
    that are its own parameters (`file`, `allow_pickle`) are kept."""
    import zipfile

    for name in arrays:
        problem = npz_name_problem(name)
        if problem:
            raise ValueError(f"output {quoted(name)}: {problem}")
    with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_STORED,
                         allowZip64=True) as zf:
        for name, value in arrays.items():
            with zf.open(f"{name}.npy", mode="w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asarray(value), allow_pickle=False)


SHOWN_VALUES = 8
"""How many values of each output `run` without -o prints (the first ones, flattened)."""


def source_model(path: str, *, by_suffix: bool = False) -> str | None:
    """"an ONNX model" / "a TFLite model" when `path` is a model file a front end reads (by
    content; with `by_suffix` also by its suffix), not a WebNN graph; None otherwise (a
    folder, an unreadable file, a graph)."""
    from converter.api import front_ends

    p = Path(path)
    if not p.is_file():
        return None
    try:
        with open(p, "rb") as f:
            head = f.read(64)
    except OSError:
        return None
    suffix = p.suffix.lower() if by_suffix else ""
    for fe in front_ends().values():
        if fe.sniff(head, "") or (suffix and fe.sniff(head, suffix)):
            article = "an" if fe.label[:1].upper() in "AEIOU" else "a"
            return f"{article} {fe.label} model"
    return None


def _convert_first(graph: str, what: str) -> str:
    """The error for a source model given to `run` (`what`: "is an ONNX model", ...)."""
    import shlex

    return (f"{graph} {what}, not a converted WebNN graph: convert it first "
            f"(`webnn-convert convert {shlex.quote(graph)}`), then run the folder it writes; "
            f"`webnn-convert validate {shlex.quote(graph)}` compares the two")


def _preview(value: Any) -> str:
    """The first `SHOWN_VALUES` values of an array, flattened, "..." when there are more."""
    arr = np.asarray(value)
    flat = arr.reshape(-1)[:SHOWN_VALUES]
    if arr.dtype.kind == "f":
        items = [np.format_float_positional(float(v), precision=6, unique=True, trim="-")
                 if np.isfinite(v) else str(float(v)) for v in flat]
    else:
        items = [str(v.item()) for v in flat]
    more = ", ..." if arr.size > SHOWN_VALUES else ""
    return f"[{', '.join(items)}{more}]"


def _show_outputs(graph: str, backend: str, device: str, precision: str, seconds: float,
                  results: dict[str, Any], as_json: bool) -> None:
    """`run` without -o: every output on stdout (JSON: with all its values)."""
    if as_json:
        emit_json({"graph": graph, "output": None, "backend": backend, "device": device,
                   "precision": precision, "seconds": seconds,
                   "outputs": {k: {"dtype": np.asarray(v).dtype.name,
                                   "shape": list(np.shape(v)),
                                   "values": np.asarray(v).tolist()}
                               for k, v in results.items()}})
        return
    click.echo(f"ran {graph} on {backend} ({device}) in {seconds * 1e3:.1f} ms "
               "(no -o: outputs printed, not saved)")
    width = max((len(k) for k in results), default=0)
    for k, v in results.items():
        arr = np.asarray(v)
        click.echo(f"  {k:<{width}}  {arr.dtype.name} {list(arr.shape)}  {_preview(arr)}")
