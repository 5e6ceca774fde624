"""Loading graph files: the `.webnn` text entry points (`loads`, `load_webnn`), the discovery
of weights next to a graph file (format doc section 5) and `build_graph`, which the JSON
reader shares.

Weights discovery order: `model.safetensors`, `<stem>.safetensors`, `<stem>.weights`,
`model.weights`; a blob pairs with `model.manifest.json` (for `model.weights`),
`<stem>.manifest.json` or `manifest.json`. A weights file given explicitly is told apart by
content (WGWT magic, else safetensors). Weights are read tensor by tensor, never wholly in
memory. Weights found next to the graph file are confined to its folder (symlinks resolved;
`converter.core.confine`). Restrictions: graph texts are at most `MAX_TEXT_BYTES`, manifests
`MAX_MANIFEST_BYTES`; the text must be UTF-8.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from converter.core.confine import confined
from converter.core.files import FileTooLarge, NotRegularFile, open_regular, read_bounded
from converter.core.webnn import ML, MLContext, MLGraph
from converter.io.serialize.errors import WebnnFormatError
from converter.io.serialize.graph_builder import GraphBuilder
from converter.io.serialize.safetensors_weights import SafetensorsWeights
from converter.io.serialize.syntax import GraphText
from converter.io.serialize.tables import (
    DEFAULT_MAX_SCALAR_BYTES,
    MAX_MANIFEST_BYTES,
    MAX_TEXT_BYTES,
    WEIGHTS_MAGIC,
)
from converter.io.serialize.text_parser import parse
from converter.io.serialize.weights import Manifest, WeightsBlob, parse_manifest


def loads(text: str, weights: bytes | None = None, manifest: str | bytes | None = None, *,
          context: MLContext | None = None, free_dims: Mapping[str, int] | None = None,
          max_scalar_bytes: int = DEFAULT_MAX_SCALAR_BYTES, path: str = "<string>"
          ) -> MLGraph:
    """Build an MLGraph from in-memory `.webnn` text, weights bytes and manifest JSON."""
    doc = parse(text, path)
    man = parse_manifest(manifest, f"{path} (manifest)",
                         weights_bytes=None if weights is None else len(weights)) \
        if manifest is not None else None
    blob = (WeightsBlob(bytes(weights), None, len(weights), f"{path} (weights)")
            if weights is not None else None)
    return GraphBuilder(doc, man, blob, context or ML().create_context(), free_dims or {},
                        max_scalar_bytes).run()


def find_companions(path: Path) -> tuple[Path | None, Path | None]:
    """The weights blob and manifest next to a graph file (format doc section 5): the blob
    `<stem>.weights` or `model.weights`; the manifest named like the blob found
    (`model.manifest.json` for `model.weights`), else `<stem>.manifest.json`, else
    `manifest.json`."""
    stem = graph_stem(path)
    folder = path.parent
    weights = next((p for p in (folder / f"{stem}.weights", folder / "model.weights")
                    if p.exists()), None)
    names = [f"{stem}.manifest.json", "manifest.json"]
    if weights is not None and weights.name == "model.weights":
        names.insert(0, "model.manifest.json")
    manifest = next((folder / n for n in names if (folder / n).exists()), None)
    return weights, manifest


def graph_stem(path: Path) -> str:
    """`model` for `model.webnn` and `model.webnn.json` (else the name without its suffix)."""
    for suffix in (".webnn.json", ".webnn"):
        if path.name.endswith(suffix) and len(path.name) > len(suffix):
            return path.name[:-len(suffix)]
    return path.stem


@dataclass(frozen=True)
class WeightsFiles:
    """The weights of a graph file: a `.safetensors` archive, or a WGWT blob and its
    manifest (any may be None)."""

    safetensors: Path | None
    weights: Path | None
    manifest: Path | None


def find_weights(path: Path) -> WeightsFiles:
    """The weights next to graph file `path`, in the order of format doc section 5:
    `model.safetensors`, `<stem>.safetensors`, `<stem>.weights`, `model.weights`; a blob
    pairs with `<stem>.manifest.json` or `manifest.json`."""
    stem = graph_stem(path)
    folder = path.parent
    for candidate in (folder / "model.safetensors", folder / f"{stem}.safetensors"):
        if candidate.exists():
            return WeightsFiles(candidate, None, None)
    return WeightsFiles(None, *find_companions(path))


def _is_wgwt(path: Path) -> bool:
    try:
        with open_regular(path, "the weights file") as f:
            return f.read(4) == WEIGHTS_MAGIC
    except OSError as e:
        raise WebnnFormatError(_reason(e), str(path)) from None


def _reason(e: OSError) -> str:
    """What an OSError of opening a graph's file says in a WebnnFormatError."""
    return str(e.strerror) if isinstance(e, NotRegularFile) else f"cannot read: {e.strerror}"


def build_graph(doc: GraphText, graph_path: Path, *, weights_path: str | Path | None = None,
                manifest_path: str | Path | None = None, context: MLContext | None = None,
                free_dims: Mapping[str, int] | None = None,
                max_scalar_bytes: int = DEFAULT_MAX_SCALAR_BYTES,
                names: tuple[Mapping[str, str], Mapping[str, str]] | None = None) -> MLGraph:
    """Replay parsed graph `doc` (from the text or the JSON form) through a fresh builder,
    reading `@weights` from `weights_path` (a WGWT blob with `manifest_path`, or a
    `.safetensors` archive: told apart by content) or, when not given, from the files
    `find_weights(graph_path)` finds. Weights are read tensor by tensor.

    Original input/output names come from `names` (the JSON form carries them), else from
    the safetensors metadata or the manifest.

    Weights files found next to the graph must lie inside its folder once symlinks are
    resolved, or inside a folder `converter.core.confine.allowed_roots` allows
    (`PathOutsideFolder` otherwise); files given explicitly are read wherever they are.
    """
    found = find_weights(graph_path)
    given = {Path(p) for p in (weights_path, manifest_path) if p is not None}
    if weights_path is not None:
        wpath = Path(weights_path)
        if _is_wgwt(wpath):
            found = WeightsFiles(None, wpath, find_companions(graph_path)[1])
        else:
            found = WeightsFiles(wpath, None, None)
    if manifest_path is not None:
        found = WeightsFiles(found.safetensors, found.weights, Path(manifest_path))
    for what, p in (("the safetensors weights file", found.safetensors),
                    ("the weights file", found.weights), ("the manifest", found.manifest)):
        if p is not None and p not in given:  # found next to the graph: confined to its folder
            confined(p, graph_path.parent, what)
    ctx = context or ML().create_context()
    with contextlib.ExitStack() as stack:
        man: Manifest | None = None
        blob: WeightsBlob | None = None
        tensors: SafetensorsWeights | None = None
        if found.safetensors is not None:
            tensors = stack.enter_context(SafetensorsWeights(found.safetensors))
            if names is None:
                names = tensors.names
        else:
            f: BinaryIO | None = None
            size = 0
            if found.weights is not None:  # opened first: the manifest is checked against it
                try:
                    f = stack.enter_context(open_regular(found.weights, "the weights file"))
                    size = os.fstat(f.fileno()).st_size
                except OSError as e:
                    raise WebnnFormatError(_reason(e), str(found.weights)) from None
            if found.manifest is not None:
                man = parse_manifest(read_file(found.manifest, MAX_MANIFEST_BYTES,
                                               "the manifest"), str(found.manifest),
                                     weights_bytes=size if f is not None else None)
            if f is not None:
                blob = WeightsBlob(None, f, size, str(found.weights))
        return GraphBuilder(doc, man, blob, ctx, free_dims or {}, max_scalar_bytes, names,
                            tensors).run()


def load_webnn(path: str | Path, *, weights_path: str | Path | None = None,
               manifest_path: str | Path | None = None, context: MLContext | None = None,
               free_dims: Mapping[str, int] | None = None,
               max_scalar_bytes: int = DEFAULT_MAX_SCALAR_BYTES) -> MLGraph:
    """Load `<stem>.webnn` into an MLGraph, with its weights found next to it unless given
    (`find_weights`: `model.safetensors`, `<stem>.safetensors`, `<stem>.weights` +
    `<stem>.manifest.json`, `model.weights` + `manifest.json`); `weights_path` may name a
    blob or a `.safetensors` file.

    `free_dims` sets `dyn(...)` dimensions by name (default: their maximum). The weights file
    is read slice by slice (never wholly in memory).
    """
    path = Path(path)
    raw = read_file(path, MAX_TEXT_BYTES, "the graph file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise WebnnFormatError(f"not UTF-8 text (byte {e.start})", str(path), line) from None
    doc = parse(text, str(path))
    return build_graph(doc, path, weights_path=weights_path, manifest_path=manifest_path,
                       context=context, free_dims=free_dims, max_scalar_bytes=max_scalar_bytes)


def read_file(path: Path, limit: int, what: str = "the file") -> bytes:
    """The whole regular file (`converter.core.files.read_bounded`: a FIFO, device or folder is
    refused, at most `limit` + 1 bytes are read); larger than `limit` bytes, not a regular
    file, or unreadable, is a WebnnFormatError."""
    try:
        return read_bounded(path, limit, what)
    except FileTooLarge:
        raise WebnnFormatError(f"the file is larger than {limit} bytes", str(path)) from None
    except OSError as e:
        raise WebnnFormatError(_reason(e), str(path)) from None


__all__ = ["WeightsFiles", "build_graph", "find_companions", "find_weights", "graph_stem",
           "load_webnn", "loads", "read_file"]

