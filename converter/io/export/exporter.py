"""Export entry points: `export(graph, outdir, format=...)` and `load(path)`.

Formats:

- "webnn": `<stem>.webnn` (webnn-graph text) and its weights.
- "webnn-json": `<stem>.webnn.json` (the JSON twin, `webnn-graph-json`: same content, same
  identifiers and constant placement) and its weights.
- "js": `<stem>.js` and `<stem>.html`, plus the "webnn" files; the module reads the
  `<stem>.weights` blob, which is therefore written even with `weights="safetensors"`
  (without a manifest then: the module embeds its own). A graph with a NaN option value
  (`pad`'s value) gets no `<stem>.webnn` text (its numbers have no NaN; a warning says so):
  the JavaScript writes `NaN` (and infinities as `Infinity`), the text format `1e999` for
  infinities; "webnn" and "all" refuse such a graph (`NotRepresentable`).
- "onnx": `<stem>.onnx` from `converter.runtimes.onnxruntime.to_onnx.to_onnx(graph)` (tensor data goes to
  `<stem>.onnx.data` when the model would exceed protobuf's 2 GiB limit).
- a decoder's `GeneratorGraphs` (`converter.validate.decoder_graphs.generator_graphs`) in
  format "js" or "all": the generation runtime of `converter.io.export.generator_js`
  (`<stem>.js` with `createGenerator`, `<stem>.decode.js`, `<stem>.prefill.js`, one shared
  `<stem>.weights`, `<stem>.html`); `weights`, `name` and the other formats do not apply.
- a `ConversionResult` with host steps (docs/host-steps.md): `<stem>.host.json` besides, in
  formats "webnn", "webnn-json", "js" and "all" (`converter.io.serialize.host_table`; the
  JavaScript module embeds them too); "onnx" holds the graph only (a warning says so).
  `load_model(path)` (`converter.io.export.model_loader`) loads graph, state and host steps.
- "all": "webnn", "js" and "onnx" (not the JSON twin, an alternative spelling of the
  `.webnn` file); when the ONNX exporter module is not installed, "all" writes the others
  and warns.

Weights of "webnn", "webnn-json", "js" and "all" (`weights=`): "blob" (default) writes
`<stem>.weights` (WGWT) + `<stem>.manifest.json`; "safetensors" writes `<stem>.safetensors`
instead (keys = the `@weights` references; see `converter.io.export.safetensors_weights`).

`load(path)` reads `<stem>.webnn` or `<stem>.webnn.json` (told apart by content: a JSON
document starts with `{`) and finds the weights next to it in the order of the format
document, section 5: `model.safetensors`, `<stem>.safetensors`, `<stem>.weights`,
`model.weights` (a blob with `<stem>.manifest.json` or `manifest.json`). Those files must lie
inside the graph's folder once symlinks are resolved, or in a folder of `allow_roots`.

Output folders (`export(..., force=False)`; `converter.io.export.folder` has the details):

- Everything is written into a temporary folder INSIDE `outdir`
  (`.webnn-converter.io.export-XXXX`, so on `outdir`'s own file system: `outdir` may be a mount
  point) and moved into place by renames only once every file has been written. Until then
  the folder's previous files are untouched: on an error, a full disk, SIGINT or SIGTERM
  (which the CLI turns into an exception) the temporary folder is removed and `outdir` is
  as it was (removed again when this export created it). A process killed outright
  (`kill -9`) leaves its temporary folder, which the next export into `outdir` removes.
- Moving in is renames and unlinks only (no data written; SIGINT/SIGTERM wait until it
  ends): the marker first, listing old and new files, then each file, then the stale files
  of the previous export go, then the final marker. Only a `kill -9` or power loss within
  those few renames can leave old and new files side by side (each file whole, all listed in
  the marker, so the next export replaces them without `force`). A reader looking at the
  folder during the renames may see old and new files side by side too. The folder itself
  keeps its identity (a web server or shell running inside it keeps working).
- Exports into one folder take turns: an exclusive lock on the folder is held while one
  removes stale temporary folders, claims the folder and moves its files in, so two
  concurrent exports never mix; the last one to move in wins, whole.
- Our folders carry a marker file, `.webnn-converter.json`, listing the files the last
  export wrote with their size and SHA-256. An existing folder that is empty, or whose every
  entry is listed in its marker with unchanged content, is ours: its files are replaced and
  the files of the previous export that this one does not write are removed, so switching
  `format="all"` to `format="webnn"` or changing the stem leaves no stale file.
- Any other non-empty folder is refused (`FolderNotOurs`, a FileExistsError, naming the
  folder and a file we did not write, or one that changed since) unless `force=True`.
  `force=True` merges into any folder: our files are moved in (same-named files replaced)
  and nothing is removed, so several exports (another stem, another format) can share one
  folder; the marker then lists the files it listed before plus the new ones (other files
  stay unlisted, so such a folder keeps needing `force`).
- Written files get the mode `0o666 & ~umask`, a created folder `0o777 & ~umask` (as `open()`
  and `mkdir()` would give; `tempfile` makes them private).
- Errors are one line naming `outdir`: `ExportFolderError` (an OSError) for a folder that
  cannot be created or written (disk full, read-only, a symbolic link to nothing).

`default_stem(model)` and `default_outdir(model)` give the names the CLI uses when `--stem` and
`-o` are not given: the model file's stem made a plain file name (`models/My Net.onnx` ->
`My_Net`) and the folder `<model's folder>/<stem>_webnn`. `export()` itself cannot know the
model's file name: its `stem` defaults to "model".
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import re
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from converter.core.budgets import Budgets, format_bytes, out_of_memory
from converter.core.budgets import active as active_budgets
from converter.core.confine import allowed_roots, confined
from converter.core.files import NotRegularFile, open_regular
from converter.core.webnn import MLContext, MLGraph
from converter.io.export.folder import (
    MARKER,
    ExportFolderError,
    FolderNotOurs,
    TempFolder,
    claim,
    locked_folder,
    remove_if_created,
    replace,
    sweep,
)
from converter.io.export.generator_js import GeneratorGraphs, write_generator
from converter.io.export.javascript import check_stem, write_javascript
from converter.io.export.onnx_file import save_streamed, streamed_size
from converter.io.serialize.errors import WebnnFormatError
from converter.io.serialize.host_table import HOST_SUFFIX, write_host
from converter.io.serialize.json_reader import is_json_document, load_webnn_json
from converter.io.serialize.json_writer import write_webnn_json
from converter.io.serialize.loader import load_webnn
from converter.io.serialize.plan import WebnnPlan, plan
from converter.io.serialize.tables import JSON_SUFFIX
from converter.io.serialize.text_writer import write_webnn
from converter.io.serialize.weights import write_weights

FORMATS = ("webnn", "webnn-json", "js", "onnx", "all")
WEIGHTS = ("blob", "safetensors")
ONNX_EXTERNAL_DATA_THRESHOLD = 1_800_000_000


def _graph_of(graph_or_result: Any) -> MLGraph:
    if isinstance(graph_or_result, MLGraph):
        return graph_or_result
    graph = getattr(graph_or_result, "graph", None)
    if isinstance(graph, MLGraph):
        return graph
    raise TypeError(f"export: expected an MLGraph or a conversion result with a .graph, got "
                    f"{type(graph_or_result).__name__}")


def _onnx_module() -> Any | None:
    try:
        return importlib.import_module("converter.runtimes.onnxruntime.to_onnx")
    except ModuleNotFoundError as e:
        if e.name in ("converter.runtimes.onnxruntime.to_onnx", "converter.io.export"):
            return None
        raise


def _write_onnx(module: Any, graph: MLGraph, folder: Path, stem: str) -> list[Path]:
    import onnx

    model = module.to_onnx(graph)
    path = folder / f"{stem}.onnx"
    try:
        size = streamed_size(model)  # model.ByteSize() would encode the whole model
    except Exception:  # noqa: BLE001 - protobuf refuses to size >2 GiB messages
        size = ONNX_EXTERNAL_DATA_THRESHOLD + 1
    if size > ONNX_EXTERNAL_DATA_THRESHOLD:
        data_name = f"{stem}.onnx.data"
        onnx.save_model(model, str(path), save_as_external_data=True,
                        all_tensors_to_one_file=True, location=data_name)
        return [path, folder / data_name]
    save_streamed(model, path)  # not the whole serialized model in memory at once
    return [path]


def _write_text_safetensors(p: WebnnPlan, folder: Path, stem: str, blob: bool,
                            text: bool = True) -> list[Path]:
    """`<stem>.webnn` (unless not `text`) + `<stem>.safetensors` (+ the `<stem>.weights`
    blob when `blob`)."""
    from converter.io.serialize.safetensors_weights import write_safetensors

    written = []
    if text:
        text_path = folder / f"{stem}.webnn"
        with open(text_path, "w", encoding="utf-8", newline="\n") as f:
            for chunk in p.iter_text():
                f.write(chunk)
        written.append(text_path)
    written.append(write_safetensors(p, folder / f"{stem}.safetensors"))
    if blob:
        with open(folder / f"{stem}.weights", "wb") as fb:
            write_weights(p, fb)
        written.append(folder / f"{stem}.weights")
    return written


def _write_all(graph: MLGraph, folder: Path, fmt: str, stem: str, name: str,
               weights: str, state: tuple[Any, ...] = (), model: Any = None) -> list[Path]:
    """The files of `graph` in `fmt`; `model` (a ConversionResult or None) gives the carried
    `state`'s companions: its host steps (`<stem>.host.json`, and the JavaScript module's)
    and its source-side inputs and outputs."""
    written: list[Path] = []
    host = getattr(model, "host", None)
    if host is not None and fmt in ("webnn", "webnn-json", "js", "all"):
        written.append(write_host(host, model.inputs, model.outputs, folder, stem))
    elif host is not None:
        warnings.warn(f"export: the {fmt} file holds the WebNN graph only; its host steps "
                      "(docs/host-steps.md) need format webnn, webnn-json, js or all",
                      stacklevel=3)
    js_host = {"host": host, "outputs": model.outputs, "inputs": model.inputs} \
        if host is not None else {}
    if fmt == "webnn-json":
        written += write_webnn_json(graph, folder, stem, name, weights=weights)
    if fmt in ("webnn", "js", "all"):
        p = plan(graph, name, state)  # a result's carried state: manifest + module
        problem = p.text_problem() if fmt == "js" else ""
        if problem:
            warnings.warn(f"export: {stem}.webnn left out: {problem}, which the .webnn text "
                          f"cannot hold (its numbers have no NaN); {stem}.js carries it",
                          stacklevel=3)
        if weights == "safetensors":
            written += _write_text_safetensors(p, folder, stem, blob=fmt != "webnn",
                                               text=not problem)
        else:
            written += write_webnn(graph, folder, stem, name, plan_=p, text=not problem)
        if fmt in ("js", "all"):
            written += write_javascript(graph, folder, stem, name, plan_=p, **js_host)
    if fmt in ("onnx", "all"):
        module = _onnx_module()
        if module is None or not hasattr(module, "to_onnx"):
            if fmt == "onnx":
                raise NotImplementedError("export: the ONNX exporter "
                                          "(converter.runtimes.onnxruntime.to_onnx.to_onnx) is not available")
            warnings.warn("export: converter.runtimes.onnxruntime.to_onnx is not available; skipped the ONNX "
                          "file", stacklevel=3)
        else:
            written += _write_onnx(module, graph, folder, stem)
    return written


OUTPUT_SUFFIXES = (".webnn", JSON_SUFFIX, ".weights", ".manifest.json", ".safetensors", ".js",
                   ".html", ".onnx", ".onnx.data", HOST_SUFFIX)
"""Every suffix `export()` appends to the stem."""
_UNSAFE_STEM_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


def default_stem(model: str | os.PathLike[str]) -> str:
    """The file stem for outputs of `model` (a path): its name without the last suffix,
    with every character outside `[A-Za-z0-9_.-]` replaced by `_` and a leading `.` or `-`
    prefixed with `_`; "model" when nothing is left."""
    stem = _UNSAFE_STEM_CHARS.sub("_", Path(model).stem)
    if stem[:1] in (".", "-"):
        stem = "_" + stem
    return stem if stem.strip("._-") else "model"


def default_outdir(model: str | os.PathLike[str]) -> Path:
    """The output folder for `model` (a path): `<its folder>/<default_stem(model)>_webnn`."""
    return Path(model).parent / f"{default_stem(model)}_webnn"


def current_umask() -> int:
    """The process umask (read from /proc on Linux, else set and restored at once)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # no other way to read it; restored at once
    os.umask(mask)
    return mask


def check_outdir(outdir: str | os.PathLike[str], *, force: bool = False) -> None:
    """Raise the error `export(..., outdir, force=force)` would raise for the folder itself
    (ValueError for a file-system root, NotADirectoryError, FolderNotOurs, ExportFolderError
    for a dangling symlink) without writing anything, so that a caller can fail before a
    long conversion. Listed files are compared by size only here; `export()` compares their
    SHA-256 too. Takes the folder's lock for the check (waits while an export moves its
    files in)."""
    target = Path(os.path.abspath(outdir))
    if target.parent == target:
        raise ValueError(f"export: {outdir} is a file-system root; choose a folder")
    with contextlib.ExitStack() as stack:
        with contextlib.suppress(OSError):  # absent, not a folder, not lockable: see claim
            stack.enter_context(locked_folder(target, Path(outdir), 0, create=False))
        claim(target, force, Path(outdir), verify=False)


def export(graph_or_result: Any, outdir: str | os.PathLike[str], format: str = "webnn",
           stem: str = "model", *, name: str | None = None, weights: str = "blob",
           force: bool = False, budgets: Budgets | None = None) -> list[Path]:
    """Write `graph_or_result` (an MLGraph or anything with a `.graph`) into `outdir` in
    `format` ("webnn", "webnn-json", "js", "onnx" or "all"); returns the written paths
    (inside outdir; the marker file is not listed).

    `stem` names the files (a plain file name, see `default_stem`); `name` is the graph name
    stored in the `.webnn` header / JSON `name` (default: the stem); `weights` is "blob"
    (`<stem>.weights` + `<stem>.manifest.json`) or "safetensors" (`<stem>.safetensors`).
    Without `force` the folder must be absent, empty or written by an earlier export, whose
    files are replaced (stale ones removed); `force=True` merges into any folder and removes
    nothing (see the module docstring). Raises ValueError for a bad argument,
    NotADirectoryError / `FolderNotOurs` (a FileExistsError) for an unusable `outdir`,
    `ExportFolderError` (an OSError naming `outdir`) when the folder cannot be written (disk
    full, read-only, ...), and whatever the writers raise (nothing is left behind then).
    `BudgetExceeded` when the files would be larger than the `max_export_bytes` budget
    (`budgets`, default the active ones; estimated before anything is written, see
    `export_size`), or when the writers run out of memory.
    """
    generator = graph_or_result if isinstance(graph_or_result, GeneratorGraphs) else None
    graph = generator.decode if generator is not None else _graph_of(graph_or_result)
    if format not in FORMATS:
        raise ValueError(f"export: format {format!r} is not one of {', '.join(FORMATS)}")
    if generator is not None and format not in ("js", "all"):
        raise ValueError(f"export: a decoder's generator is JavaScript (format 'js' or "
                         f"'all'), not {format!r}")
    if weights not in WEIGHTS:
        raise ValueError(f"export: weights {weights!r} is not one of {', '.join(WEIGHTS)}")
    budgets = budgets if budgets is not None else active_budgets()
    size = export_size(graph, format, weights) * (2 if generator is not None else 1)
    budgets.check("max_export_bytes", size, f"the {format} export would write about")
    check_stem(stem)
    outdir = Path(outdir)
    check_outdir(outdir, force=force)  # fail early, before the work
    target = Path(os.path.abspath(outdir))
    mask = current_umask()
    file_mode, dir_mode = 0o666 & ~mask, 0o777 & ~mask
    with locked_folder(target, outdir, dir_mode) as created:
        try:
            sweep(target)
            tmp = TempFolder(target, outdir)
        except BaseException:
            remove_if_created(target, created)
            raise
    done = False
    try:
        try:
            written = (write_generator(generator, tmp.path, stem) if generator is not None
                       else _write_all(graph, tmp.path, format, stem,
                                       name if name is not None else stem, weights,
                                       tuple(getattr(graph_or_result, "state", ())),
                                       graph_or_result))
            for n in tmp.files():
                os.chmod(tmp.path / n, file_mode)
        except MemoryError:
            raise out_of_memory(budgets, "the export") from None
        except OSError as e:
            if isinstance(e, ExportFolderError):
                raise
            raise ExportFolderError(e.errno or errno.EIO, _write_failure(e, outdir, tmp.path,
                                                                         format, size)
                                    ) from None
        with locked_folder(target, outdir, dir_mode):
            previous = claim(target, force, outdir) or {}  # again: it may have changed
            replace(target, outdir, tmp, previous, force, file_mode)
            done = True
            tmp.close()
        return [outdir / p.name for p in written]
    finally:
        if not done:
            with contextlib.suppress(OSError), locked_folder(target, outdir, dir_mode,
                                                             create=False):
                tmp.close()
                remove_if_created(target, created)
        tmp.close()  # without the lock when the folder is gone; a no-op otherwise


def _write_failure(e: OSError, outdir: Path, tmp: Path, format: str, size: int) -> str:
    """One line for an OSError of the writers: the user's folder, the file (when known, by
    its final name), the cause."""
    what = f"the {format} files"
    if e.filename and Path(os.fsdecode(e.filename)).parent == tmp:
        what = Path(os.fsdecode(e.filename)).name
    return (f"export: cannot write {what} into {outdir}: {e.strerror or e} (the export "
            f"writes about {format_bytes(size)}); the folder was left as it was")


TEXT_BYTES_PER_OPERATION = 160
"""What `export_size` reckons one operation takes in each text file (.webnn, .js, .onnx)."""


def export_size(graph: MLGraph, format: str = "webnn", weights: str = "blob") -> int:
    """An estimate of the bytes `export(graph, format=..., weights=...)` writes: the
    constants' bytes once per file that carries them (the weights blob, a safetensors file,
    the ONNX model or its external data) plus `TEXT_BYTES_PER_OPERATION` per operation and
    text file. A lower bound for the weights, rough for the text."""
    constant_bytes = sum(int(c.value.nbytes) for c in graph.constants if c.value is not None)
    copies = texts = 0
    if format in ("webnn", "webnn-json", "js", "all"):
        copies += 1 + (weights == "safetensors" and format in ("js", "all"))
        texts += 1 + (format in ("js", "all"))
    if format in ("onnx", "all"):
        copies += 1
        texts += 1
    return constant_bytes * copies + len(graph.operations) * TEXT_BYTES_PER_OPERATION * texts


def load(path: str | os.PathLike[str], *, context: MLContext | None = None,
         free_dims: Mapping[str, int] | None = None,
         weights_path: str | os.PathLike[str] | None = None,
         manifest_path: str | os.PathLike[str] | None = None,
         allow_roots: Iterable[str | os.PathLike[str]] | None = None) -> MLGraph:
    """Load a `.webnn` or `.webnn.json` graph (with its weights) into an MLGraph.

    `path` is the graph file (text or JSON, told apart by content) or a folder holding
    `model.webnn`, `model.webnn.json`, or the graph files of a single stem (the text one
    preferred). Weights are found next to the graph file (see the module docstring) unless
    `weights_path` (a WGWT blob or a `.safetensors` file) / `manifest_path` are given.
    Input and output names are the original ones.

    Files found next to the graph (and the graph file found in a folder) must lie inside
    that folder once symlinks are resolved, or inside one of `allow_roots`
    (`converter.core.errors.PathOutsideFolder` otherwise; see `converter.core.confine`).
    """
    with allowed_roots(allow_roots):
        p = Path(path)
        if p.is_dir():
            p = _graph_file_in(p)
            confined(p, path, "the graph file")
        try:
            with open_regular(p, "the graph file") as f:
                head = f.read(64)
        except NotRegularFile as e:
            raise WebnnFormatError(str(e.strerror), str(p)) from None
        except OSError as e:
            raise WebnnFormatError(f"cannot read: {e.strerror}", str(p)) from None
        loader = load_webnn_json if is_json_document(head) else load_webnn
        return loader(p, weights_path=Path(weights_path) if weights_path is not None else None,
                      manifest_path=Path(manifest_path) if manifest_path is not None
                      else None, context=context, free_dims=free_dims)


def _graph_file_in(folder: Path) -> Path:
    for preferred in ("model.webnn", f"model{JSON_SUFFIX}"):
        if (folder / preferred).exists():  # not a regular file: `load` says what it is
            return folder / preferred
    texts = sorted(folder.glob("*.webnn"))
    jsons = sorted(folder.glob(f"*{JSON_SUFFIX}"))
    stems = {q.name[:-len(".webnn")] for q in texts} | {q.name[:-len(JSON_SUFFIX)]
                                                        for q in jsons}
    if len(stems) == 1:
        return (texts or jsons)[0]
    raise WebnnFormatError(f"expected model.webnn, model{JSON_SUFFIX} or exactly one .webnn "
                           f"graph (text and/or JSON of one stem), found {len(stems)} stems",
                           str(folder))


__all__ = ["FORMATS", "MARKER", "OUTPUT_SUFFIXES", "WEIGHTS", "ExportFolderError",
           "FolderNotOurs", "check_outdir",
           "current_umask", "default_outdir", "default_stem", "export", "load"]
