"""Export entry points: `export(graph, outdir, format=...)` and `load(path)`.

Formats:

- "webnn": `<stem>.webnn` (webnn-graph text) and its weights.
- "webnn-json": `<stem>.webnn.json` (the JSON twin, `webnn-graph-json`: same content, same
  identifiers and constant placement) and its weights.
- "js": `<stem>.js` and `<stem>.html`, plus the "webnn" files; the module reads the
  `<stem>.weights` blob, which is therefore written even with `weights="safetensors"`
  (without a manifest then: the module embeds its own).
- "onnx": `<stem>.onnx` from `converter.export.onnx.to_onnx(graph)` (tensor data goes to
  `<stem>.onnx.data` when the model would exceed protobuf's 2 GiB limit).
- "all": "webnn", "js" and "onnx" (not the JSON twin, an alternative spelling of the
  `.webnn` file); when the ONNX exporter module is not installed, "all" writes the others
  and warns.

Weights of "webnn", "webnn-json", "js" and "all" (`weights=`): "blob" (default) writes
`<stem>.weights` (WGWT) + `<stem>.manifest.json`; "safetensors" writes `<stem>.safetensors`
instead (keys = the `@weights` references; see `converter.export.safetensors_weights`).

`load(path)` reads `<stem>.webnn` or `<stem>.webnn.json` (told apart by content: a JSON
document starts with `{`) and finds the weights next to it in the order of the format
document, section 5: `model.safetensors`, `<stem>.safetensors`, `<stem>.weights`,
`model.weights` (a blob with `<stem>.manifest.json` or `manifest.json`).

All-or-nothing: files are written into a temporary folder next to `outdir` (in its parent)
and moved into place only once every file has been written; on failure nothing is left
behind (neither partial files nor the temporary folder). If `outdir` does not exist it is
created by renaming the temporary folder; if it exists, each file is moved in with an atomic
rename (existing files of the same name are replaced).
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from converter.webnn import MLContext, MLGraph

from .javascript import check_stem, write_javascript
from .webnn_format import WebnnPlan, plan, write_webnn, write_weights
from .webnn_json import JSON_SUFFIX, is_json_document, load_webnn_json, write_webnn_json
from .webnn_reader import WebnnFormatError, load_webnn

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
        return importlib.import_module("converter.export.onnx")
    except ModuleNotFoundError as e:
        if e.name in ("converter.export.onnx", "converter.export"):
            return None
        raise


def _write_onnx(module: Any, graph: MLGraph, folder: Path, stem: str) -> list[Path]:
    import onnx

    model = module.to_onnx(graph)
    path = folder / f"{stem}.onnx"
    try:
        size = model.ByteSize()
    except Exception:  # noqa: BLE001 - protobuf refuses to size >2 GiB messages
        size = ONNX_EXTERNAL_DATA_THRESHOLD + 1
    if size > ONNX_EXTERNAL_DATA_THRESHOLD:
        data_name = f"{stem}.onnx.data"
        onnx.save_model(model, str(path), save_as_external_data=True,
                        all_tensors_to_one_file=True, location=data_name)
        return [path, folder / data_name]
    onnx.save_model(model, str(path))
    return [path]


def _write_text_safetensors(p: WebnnPlan, folder: Path, stem: str, blob: bool
                            ) -> list[Path]:
    """`<stem>.webnn` + `<stem>.safetensors` (+ the `<stem>.weights` blob when `blob`)."""
    from .safetensors_weights import write_safetensors

    text_path = folder / f"{stem}.webnn"
    with open(text_path, "w", encoding="utf-8", newline="\n") as f:
        for chunk in p.iter_text():
            f.write(chunk)
    written = [text_path, write_safetensors(p, folder / f"{stem}.safetensors")]
    if blob:
        with open(folder / f"{stem}.weights", "wb") as fb:
            write_weights(p, fb)
        written.append(folder / f"{stem}.weights")
    return written


def _write_all(graph: MLGraph, folder: Path, fmt: str, stem: str, name: str,
               weights: str) -> list[Path]:
    written: list[Path] = []
    if fmt == "webnn-json":
        written += write_webnn_json(graph, folder, stem, name, weights=weights)
    if fmt in ("webnn", "js", "all"):
        p = plan(graph, name)
        if weights == "safetensors":
            written += _write_text_safetensors(p, folder, stem, blob=fmt != "webnn")
        else:
            written += write_webnn(graph, folder, stem, name, plan_=p)
        if fmt in ("js", "all"):
            written += write_javascript(graph, folder, stem, name, plan_=p)
    if fmt in ("onnx", "all"):
        module = _onnx_module()
        if module is None or not hasattr(module, "to_onnx"):
            if fmt == "onnx":
                raise NotImplementedError("export: the ONNX exporter "
                                          "(converter.export.onnx.to_onnx) is not available")
            warnings.warn("export: converter.export.onnx is not available; skipped the ONNX "
                          "file", stacklevel=3)
        else:
            written += _write_onnx(module, graph, folder, stem)
    return written


def export(graph_or_result: Any, outdir: str | os.PathLike[str], format: str = "webnn",
           stem: str = "model", *, name: str | None = None, weights: str = "blob"
           ) -> list[Path]:
    """Write `graph_or_result` (an MLGraph or anything with a `.graph`) into `outdir` in
    `format` ("webnn", "webnn-json", "js", "onnx" or "all"); returns the written paths
    (inside outdir).

    `stem` names the files (a plain file name); `name` is the graph name stored in the
    `.webnn` header / JSON `name` (default: the stem); `weights` is "blob" (`<stem>.weights`
    + `<stem>.manifest.json`) or "safetensors" (`<stem>.safetensors`).
    """
    graph = _graph_of(graph_or_result)
    if format not in FORMATS:
        raise ValueError(f"export: format {format!r} is not one of {', '.join(FORMATS)}")
    if weights not in WEIGHTS:
        raise ValueError(f"export: weights {weights!r} is not one of {', '.join(WEIGHTS)}")
    check_stem(stem)
    outdir = Path(outdir)
    if outdir.exists() and not outdir.is_dir():
        raise NotADirectoryError(f"export: {outdir} exists and is not a folder")
    parent = outdir.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{outdir.name}.export-", dir=parent))
    try:
        written = _write_all(graph, tmp, format, stem, name if name is not None else stem,
                             weights)
        if not outdir.exists():
            try:
                os.rename(tmp, outdir)
            except OSError:
                if not outdir.is_dir():
                    raise
            else:
                return [outdir / p.name for p in written]
        for p in written:
            os.replace(p, outdir / p.name)
        return [outdir / p.name for p in written]
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def load(path: str | os.PathLike[str], *, context: MLContext | None = None,
         free_dims: Mapping[str, int] | None = None,
         weights_path: str | os.PathLike[str] | None = None,
         manifest_path: str | os.PathLike[str] | None = None) -> MLGraph:
    """Load a `.webnn` or `.webnn.json` graph (with its weights) into an MLGraph.

    `path` is the graph file (text or JSON, told apart by content) or a folder holding
    `model.webnn`, `model.webnn.json`, or the graph files of a single stem (the text one
    preferred). Weights are found next to the graph file (see the module docstring) unless
    `weights_path` (a WGWT blob or a `.safetensors` file) / `manifest_path` are given.
    Input and output names are the original ones.
    """
    p = Path(path)
    if p.is_dir():
        p = _graph_file_in(p)
    try:
        with open(p, "rb") as f:
            head = f.read(64)
    except OSError as e:
        raise WebnnFormatError(f"cannot read: {e.strerror}", str(p)) from None
    loader = load_webnn_json if is_json_document(head) else load_webnn
    return loader(p, weights_path=weights_path, manifest_path=manifest_path,
                  context=context, free_dims=free_dims)


def _graph_file_in(folder: Path) -> Path:
    for preferred in ("model.webnn", f"model{JSON_SUFFIX}"):
        if (folder / preferred).is_file():
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


__all__ = ["FORMATS", "WEIGHTS", "export", "load"]
