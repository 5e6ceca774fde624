"""Export entry points: `export(graph, outdir, format=...)` and `load(path)`.

Formats:

- "webnn": `<stem>.webnn`, `<stem>.weights`, `<stem>.manifest.json` (webnn-graph format).
- "js": `<stem>.js` and `<stem>.html`, plus the `.webnn` files (the `<stem>.weights` blob
  the module reads is shared with them).
- "onnx": `<stem>.onnx` from `converter.export.onnx.to_onnx(graph)` (tensor data goes to
  `<stem>.onnx.data` when the model would exceed protobuf's 2 GiB limit).
- "all": every format above; when the ONNX exporter module is not installed, "all" writes
  the others and warns.

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
from .webnn_format import plan, write_webnn
from .webnn_reader import WebnnFormatError, load_webnn

FORMATS = ("webnn", "js", "onnx", "all")
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


def _write_all(graph: MLGraph, folder: Path, fmt: str, stem: str, name: str) -> list[Path]:
    written: list[Path] = []
    if fmt in ("webnn", "js", "all"):
        p = plan(graph, name)
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
           stem: str = "model", *, name: str | None = None) -> list[Path]:
    """Write `graph_or_result` (an MLGraph or anything with a `.graph`) into `outdir` in
    `format` ("webnn", "js", "onnx" or "all"); returns the written paths (inside outdir).

    `stem` names the files (a plain file name); `name` is the graph name stored in the
    `.webnn` header (default: the stem).
    """
    graph = _graph_of(graph_or_result)
    if format not in FORMATS:
        raise ValueError(f"export: format {format!r} is not one of {', '.join(FORMATS)}")
    check_stem(stem)
    outdir = Path(outdir)
    if outdir.exists() and not outdir.is_dir():
        raise NotADirectoryError(f"export: {outdir} exists and is not a folder")
    parent = outdir.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{outdir.name}.export-", dir=parent))
    try:
        written = _write_all(graph, tmp, format, stem, name if name is not None else stem)
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
    """Load a `.webnn` graph (with its `.weights` and `.manifest.json`) into an MLGraph.

    `path` is the `.webnn` file or a folder holding `model.webnn` or exactly one `*.webnn`.
    Input and output names are the original ones (restored from the manifest).
    """
    p = Path(path)
    if p.is_dir():
        candidates = sorted(p.glob("*.webnn"))
        if (p / "model.webnn").is_file():
            p = p / "model.webnn"
        elif len(candidates) == 1:
            p = candidates[0]
        else:
            raise WebnnFormatError(f"expected model.webnn or exactly one .webnn file, found "
                                   f"{len(candidates)}", str(path))
    return load_webnn(p, weights_path=weights_path, manifest_path=manifest_path,
                      context=context, free_dims=free_dims)


__all__ = ["FORMATS", "export", "load"]
