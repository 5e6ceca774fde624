"""Files and folders no front end reads, recognised by content, each with what to do instead.

`detect_format` (in `detect`) asks `identify` about every file no front end claims by content
and `describe_directory` about every folder given as a model; a recognised kind becomes one
`ForeignFormat` error line: what the file is, that the converter reads other formats, and
the command that gets a readable model from it (tf2onnx for TensorFlow graphs, torch.onnx
for PyTorch, `webnn-convert run` for files that already are WebNN graphs, ...).

Kinds, by content (never by suffix alone): TensorFlow frozen graphs (GraphDef protobufs)
and SavedModels (`saved_model.pb` or its folder), TensorFlow.js `model.json`, safetensors
files (and the weights of an exported WebNN graph), `.webnn` text, `.webnn.json`, WebNN
weights blobs and manifests, Keras v3 `.keras` archives, HDF5 files (Keras `.h5`),
PyTorch checkpoints and TorchScript archives (zip with `data.pkl`, or the legacy pickle),
other pickles, NumPy `.npy` / `.npz`, ONNX Runtime `.ort` files, GGUF files, gzip/tar
archives and other zip archives (naming a model file inside when there is one).

Protobuf kinds are recognised by `converter.frontends.protobuf_sniff`.

Restrictions: recognition reads at most `PREFIX_BYTES` bytes of a file (plus a zip archive's
central directory) and never unpickles or executes anything; protobuf kinds are told apart
by the shape of their first fields, so a truncated or unusual file may stay unrecognised
(the fallback front end then reports it).
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from converter.core.errors import InvalidModel
from converter.frontends.protobuf_sniff import looks_like_graphdef, looks_like_saved_model

PREFIX_BYTES = 1 << 16
"""How many leading bytes of a file `identify` looks at."""

RUN_HINT = "webnn-convert run {path} --inputs INPUTS.npz -o OUTPUTS.npz"
"""How to execute a file that already is a WebNN graph."""

# Magic values of this project's own WebNN files (copies: detection must stay light, so it
# does not import the serializers; tests/converter/frontends/test_detect.py identifies the
# files converter.io.export writes).
WEBNN_TEXT_HEADER = "webnn_graph"
WEBNN_JSON_FORMAT = "webnn-graph-json"
WEBNN_MANIFEST_FORMAT = "wg-weights-manifest"
WEBNN_WEIGHTS_MAGIC = b"WGWT"
WEBNN_NAMES_METADATA = "webnn.names"

_HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
_TORCH_LEGACY_MAGIC = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"


@dataclass(frozen=True)
class ForeignKind:
    """A kind of file (or folder) the converter does not read.

    `key` is a stable identifier (JSON output), `what` the description after "is"
    ("a TensorFlow frozen graph (GraphDef)"), `advice` what to do. Both may hold
    placeholders: `{path}` (the file as the user named it) and those `identify` fills
    (`{model}`, `{entries}`, `{graph}`, `{folder}`). `webnn` marks files that already are
    (parts of) WebNN graphs: their message says so instead of "not ONNX or TFLite".
    """

    key: str
    what: str
    advice: str
    webnn: bool = False

    def message(self, label: str, readable: str, **fill: str) -> str:
        """The one-line message for the file `label`; `readable` names the formats the
        converter reads ("ONNX or TFLite"), `fill` the placeholders' values (`path`
        defaults to `label`)."""
        fill = {"path": label, **fill}
        what = self.what.format(**fill)
        advice = self.advice.format(**fill)
        if self.webnn:
            return f"{label} is {what}, not a model to convert: {advice}"
        return f"{label} is {what}, not {readable}: {advice}"


class ForeignFormat(InvalidModel):
    """The model is a file (or folder) of a kind the converter does not read; `kind` is its
    `ForeignKind.key` (`"directory"` for folders of no known kind)."""

    reason_code = "foreign_format"

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind

    def to_dict(self, interface: Any = "python") -> dict[str, Any]:
        out = super().to_dict(interface)
        out["kind"] = self.kind
        return out


# -- the kinds ------------------------------------------------------------------------------

_TF_ADVICE = ("export it to ONNX with tf2onnx first ({command}) or to TFLite with the "
              "TFLite converter ({tflite})")

GRAPHDEF = ForeignKind(
    "tensorflow-graphdef", "a TensorFlow frozen graph (GraphDef)",
    _TF_ADVICE.format(command="python -m tf2onnx.convert --graphdef {path} --inputs "
                              "INPUT:0 --outputs OUTPUT:0 --output model.onnx",
                      tflite="tf.compat.v1.lite.TFLiteConverter.from_frozen_graph"))
SAVED_MODEL = ForeignKind(
    "tensorflow-savedmodel", "a TensorFlow SavedModel",
    _TF_ADVICE.format(command="python -m tf2onnx.convert --saved-model {path} "
                              "--output model.onnx",
                      tflite="tf.lite.TFLiteConverter.from_saved_model('{path}')"))
SAVED_MODEL_FILE = ForeignKind(
    "tensorflow-savedmodel", "the graph file of a TensorFlow SavedModel (saved_model.pb)",
    _TF_ADVICE.format(command="python -m tf2onnx.convert --saved-model {folder} "
                              "--output model.onnx",
                      tflite="tf.lite.TFLiteConverter.from_saved_model('{folder}')"))
TFJS = ForeignKind(
    "tensorflow-js", "a TensorFlow.js model (model.json)",
    "convert it back with tensorflowjs_converter (--output_format=tf_saved_model), then "
    "export the SavedModel to ONNX with tf2onnx (python -m tf2onnx.convert --saved-model "
    "FOLDER --output model.onnx)")
KERAS = ForeignKind(
    "keras", "a Keras model (.keras archive)",
    "load it with keras.saving.load_model and export it: to ONNX with tf2onnx "
    "(tf2onnx.convert.from_keras) or model.export('model.onnx', format='onnx'), or to "
    "TFLite with tf.lite.TFLiteConverter.from_keras_model")
HDF5 = ForeignKind(
    "hdf5", "an HDF5 file (a Keras .h5 model or weights?)",
    "load the model with keras.models.load_model and export it to ONNX with tf2onnx "
    "(tf2onnx.convert.from_keras) or to TFLite with tf.lite.TFLiteConverter.from_keras_model")
TORCH = ForeignKind(
    "pytorch", "a PyTorch checkpoint (torch.save)",
    "load the model in PyTorch and export it with torch.onnx.export "
    "(or to TFLite with ai-edge-torch)")
TORCHSCRIPT = ForeignKind(
    "torchscript", "a TorchScript module (torch.jit.save)",
    "load it with torch.jit.load and export it with torch.onnx.export")
PICKLE = ForeignKind(
    "pickle", "a Python pickle (a PyTorch checkpoint or scikit-learn model?)",
    "load the model in its framework and export it to ONNX (torch.onnx.export for PyTorch, "
    "skl2onnx for scikit-learn)")
SAFETENSORS = ForeignKind(
    "safetensors", "a safetensors file (tensors only, no graph)",
    "convert the model it belongs to: export that to ONNX (torch.onnx.export, or "
    "optimum-cli export onnx for Hugging Face models) or to TFLite")
WEBNN_WEIGHTS_SAFETENSORS = ForeignKind(
    "webnn-weights", "the weights (.safetensors) of a WebNN graph", "run the graph next to "
    "it with `" + RUN_HINT.replace("{path}", "{graph}") + "`", webnn=True)
WEBNN_TEXT = ForeignKind(
    "webnn", "already a WebNN graph (.webnn text)", "use `" + RUN_HINT + "`", webnn=True)
WEBNN_JSON = ForeignKind(
    "webnn-json", "already a WebNN graph (.webnn.json)", "use `" + RUN_HINT + "`",
    webnn=True)
WEBNN_WEIGHTS = ForeignKind(
    "webnn-weights", "the weights blob (WGWT) of a WebNN graph", "run the graph next to it "
    "(.webnn) with `" + RUN_HINT.replace("{path}", "GRAPH.webnn") + "`", webnn=True)
WEBNN_MANIFEST = ForeignKind(
    "webnn-manifest", "the weights manifest of a WebNN graph", "run the graph next to it "
    "(.webnn) with `" + RUN_HINT.replace("{path}", "GRAPH.webnn") + "`", webnn=True)
NPY = ForeignKind(
    "numpy", "a NumPy array file (.npy)",
    "pass model inputs as an .npz archive with --inputs (validate, run)")
NPZ = ForeignKind(
    "numpy-npz", "a NumPy archive (.npz: arrays such as model inputs)",
    "pass it with --inputs to `webnn-convert validate` or `webnn-convert run`")
ORT = ForeignKind(
    "onnxruntime-ort", "an ONNX Runtime .ort model (a runtime-optimised form, not ONNX)",
    "convert the original .onnx model instead")
GGUF = ForeignKind(
    "gguf", "a GGUF model (llama.cpp)",
    "convert the original model instead (export it to ONNX, e.g. with optimum-cli export "
    "onnx)")
GZIP = ForeignKind("gzip", "a gzip-compressed file", "decompress it and pass the model in it")
TAR = ForeignKind("tar", "a tar archive", "unpack it and pass the model file in it")
ZIP = ForeignKind("zip", "a zip archive{entries}", "unpack it and pass the model file in it")
ZIP_WITH_MODEL = ForeignKind(
    "zip", "a zip archive holding {model}", "unpack it and pass {model}")
HUGGINGFACE = ForeignKind(
    "huggingface", "a Hugging Face model folder (config.json and weights, no ONNX file)",
    "export it to ONNX with optimum (optimum-cli export onnx --model {path} OUTDIR) and "
    "pass OUTDIR/model.onnx")


# -- files ----------------------------------------------------------------------------------


def _safetensors(prefix: bytes, size: int) -> bool:
    if len(prefix) < 10:
        return False
    (n,) = struct.unpack("<Q", prefix[:8])
    return 2 <= n <= size - 8 and prefix[8:9] == b"{" and prefix[9:10] in b'"}\n\r\t '


def _json_key(prefix: bytes, key: str, value: str | None = None) -> bool:
    text = prefix[:4096].decode("utf-8", "replace")
    if not text.lstrip().startswith("{"):
        return False
    pattern = f'"{re.escape(key)}"\\s*:' + (f'\\s*"{re.escape(value)}"' if value else "")
    return re.search(pattern, text) is not None


def _webnn_text(prefix: bytes) -> bool:
    text = prefix[:4096].decode("utf-8", "replace")
    lines = (ln.strip() for ln in text.splitlines())
    first = next((ln for ln in lines if ln and not ln.startswith("#")), "")
    return first.startswith(WEBNN_TEXT_HEADER + " ") or first == WEBNN_TEXT_HEADER


Found = tuple[ForeignKind, dict[str, str]]
"""A recognised kind and the values of the placeholders of its texts."""


def _zip_kind(names: Sequence[str], readable_suffixes: Sequence[str]) -> Found:
    """The kind of a zip archive with entries `names`."""
    base = {n.rsplit("/", 1)[-1] for n in names}
    if "data.pkl" in base and any(n.endswith("/constants.pkl") or "/code/" in n
                                  for n in names):
        return TORCHSCRIPT, {}
    if "data.pkl" in base:
        return TORCH, {}
    if "config.json" in names and ("model.weights.h5" in names or "metadata.json" in names):
        return KERAS, {}
    if names and all(n.endswith(".npy") for n in names):
        return NPZ, {}
    inside = [n for n in names if n.lower().endswith(tuple(readable_suffixes))]
    if inside:
        more = ", ..." if len(inside) > 3 else ""
        return ZIP_WITH_MODEL, {"model": ", ".join(inside[:3]) + more}
    shown = sorted(names)[:4]
    entries = (f" (entries: {', '.join(shown)}{', ...' if len(names) > 4 else ''})"
               if names else " (empty)")
    return ZIP, {"entries": entries}


def _zip(opener: Callable[[], Any], readable_suffixes: Sequence[str]) -> Found:
    try:
        with opener() as source, zipfile.ZipFile(source) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return ZIP, {"entries": " (unreadable)"}
    return _zip_kind(names, readable_suffixes)


def identify(model: Path | bytes, readable_suffixes: Sequence[str] = ()) -> Found | None:
    """The kind of file `model` (a path or the file's bytes) when it is one the converter
    does not read, with the values of the placeholders of its texts (`{model}`,
    `{entries}`, `{graph}`, `{folder}`); None for files of no known kind (including ONNX
    and TFLite files). The suffix only refines a description (a pickle named `.pt`)."""
    found = _identify(model, readable_suffixes)
    if found is None:
        return None
    kind, fill = found
    if kind is PICKLE and isinstance(model, Path) and model.suffix.lower() in _TORCH_SUFFIXES:
        return TORCH, fill
    return kind, fill


_TORCH_SUFFIXES = (".pt", ".pth", ".ckpt", ".bin")


def _identify(model: Path | bytes, readable_suffixes: Sequence[str]) -> Found | None:
    """`identify` by content alone; `readable_suffixes` are the suffixes of readable files,
    looked for inside archives."""
    if isinstance(model, (bytes, bytearray)):
        prefix, size, path = bytes(model[:PREFIX_BYTES]), len(model), None
    else:
        path = model
        size = path.stat().st_size
        with open(path, "rb") as f:
            prefix = f.read(PREFIX_BYTES)
    if not prefix:
        return None

    def reopen() -> Any:
        return open(path, "rb") if path is not None else io.BytesIO(bytes(model))

    if prefix[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return _zip(reopen, readable_suffixes)
    if any(prefix[at:at + 8] == _HDF5_MAGIC for at in (0, 512, 1024, 2048)):
        return HDF5, {}
    if prefix.startswith(_TORCH_LEGACY_MAGIC):
        return TORCH, {}
    if prefix[:1] == b"\x80" and prefix[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return PICKLE, {}
    if prefix.startswith(b"\x93NUMPY"):
        return NPY, {}
    if prefix.startswith(WEBNN_WEIGHTS_MAGIC):
        return WEBNN_WEIGHTS, {}
    if prefix.startswith(b"GGUF"):
        return GGUF, {}
    if prefix[4:8] == b"ORTM":
        return ORT, {}
    if prefix.startswith(b"\x1f\x8b"):
        return GZIP, {}
    if len(prefix) >= 262 and prefix[257:262] == b"ustar":
        return TAR, {}
    if _safetensors(prefix, size):
        graph = _webnn_sibling(path) if path is not None else None
        header = prefix[8:8 + 4096].decode("utf-8", "replace")
        if graph is not None or f'"{WEBNN_NAMES_METADATA}"' in header:
            return WEBNN_WEIGHTS_SAFETENSORS, {"graph": graph or "GRAPH"}
        return SAFETENSORS, {}
    if _webnn_text(prefix):
        return WEBNN_TEXT, {}
    if _json_key(prefix, "format", WEBNN_JSON_FORMAT):
        return WEBNN_JSON, {}
    if _json_key(prefix, "format", WEBNN_MANIFEST_FORMAT):
        return WEBNN_MANIFEST, {}
    if _json_key(prefix, "modelTopology") or _json_key(prefix, "weightsManifest"):
        return TFJS, {}
    if looks_like_saved_model(prefix) or (path is not None and path.name == "saved_model.pb"):
        folder = str(path.parent) if path is not None else "FOLDER"
        return SAVED_MODEL_FILE, {"folder": folder}
    if looks_like_graphdef(prefix):
        return GRAPHDEF, {}
    return None


def _webnn_sibling(path: Path) -> str | None:
    """The WebNN graph whose weights file `path` is (same stem, same folder), if any."""
    stem = path.name.removesuffix(".safetensors")
    for suffix in (".webnn", ".webnn.json"):
        if (path.parent / (stem + suffix)).is_file():
            return str(path.parent / (stem + suffix))
    return None


# -- folders --------------------------------------------------------------------------------


def describe_directory(path: Path, label: str, readable: str,
                       readable_suffixes: Sequence[str]) -> ForeignFormat:
    """The error for folder `path` given where a model file belongs (`label` is how the user
    named it): a SavedModel, a WebNN export, a Hugging Face folder, a folder holding model
    files (named), or any other folder."""
    try:
        entries = sorted(p.name for p in path.iterdir())
    except OSError as exc:
        return ForeignFormat(f"{label} is a folder that cannot be listed ({exc.strerror})",
                             kind="directory")
    names = set(entries)
    if "saved_model.pb" in names or "saved_model.pbtxt" in names:
        return ForeignFormat(SAVED_MODEL.message(label, readable), kind=SAVED_MODEL.key)
    if EXPORT_MARKER in names:
        return _export_folder(label, [n for n in entries if n != EXPORT_MARKER])
    models = [n for n in entries if n.lower().endswith(tuple(readable_suffixes))]
    if models:
        shown = ", ".join(str(Path(label) / n) for n in models[:3])
        more = ", ..." if len(models) > 3 else ""
        return ForeignFormat(f"{label} is a folder, not a model file: pass the model file in "
                             f"it ({shown}{more})", kind="directory")
    graphs = [n for n in entries if n.endswith((".webnn", ".webnn.json"))]
    if graphs:
        graph = str(Path(label) / graphs[0])
        return ForeignFormat(
            f"{label} is a folder holding a WebNN graph, not a model to convert: use "
            f"`{RUN_HINT.format(path=graph)}`", kind="webnn")
    if "model.json" in names and any(n.endswith(".bin") for n in entries):
        return ForeignFormat(TFJS.message(label, readable), kind=TFJS.key)
    if "config.json" in names and any(
            n.endswith((".safetensors", ".bin", ".pt", ".pth", ".h5", ".msgpack"))
            for n in entries):
        return ForeignFormat(HUGGINGFACE.message(label, readable), kind=HUGGINGFACE.key)
    return ForeignFormat(f"{label} is a folder, not a model file: pass the model file itself "
                         f"({readable})", kind="directory")


EXPORT_MARKER = ".webnn-converter.json"
"""The marker file of a folder `webnn-convert convert` wrote (a copy of
`converter.io.export.exporter.MARKER`: detection does not import the exporter)."""


def _export_folder(label: str, entries: Sequence[str]) -> ForeignFormat:
    """The error for a folder webnn-convert wrote (`entries`: its files), which may hold the
    converter's own ONNX export beside the WebNN graph: that is not the source model."""
    graphs = [n for n in entries if n.endswith((".webnn", ".webnn.json"))]
    if graphs:
        stem = graphs[0].removesuffix(".json").removesuffix(".webnn")
        graph = str(Path(label) / graphs[0])
        return ForeignFormat(
            f"{label} is a folder webnn-convert wrote, holding a WebNN graph (the export of "
            f"{stem}), not a model to convert: run it with `{RUN_HINT.format(path=graph)}`; "
            "to inspect or convert, pass the source model instead", kind="webnn")
    shown = ", ".join(entries[:4]) + (", ..." if len(entries) > 4 else "")
    return ForeignFormat(
        f"{label} is a folder webnn-convert wrote ({shown or 'no files'}): pass the source "
        "model instead", kind="webnn")


def file_error(model: Path | bytes, label: str, readable: str,
               readable_suffixes: Sequence[str]) -> ForeignFormat | None:
    """The error for file `model` when `identify` recognises it, else None."""
    found = identify(model, readable_suffixes)
    if found is None:
        return None
    kind, fill = found
    if not isinstance(model, Path):
        fill = {"path": "FILE", **fill}  # bytes: commands name a placeholder, not "<bytes>"
    return ForeignFormat(kind.message(label, readable, **fill), kind=kind.key)


def readable_text(labels: Sequence[str]) -> str:
    """"ONNX or TFLite" from the front ends' labels (alphabetical)."""
    ordered = sorted(labels, key=str.lower)
    if len(ordered) <= 1:
        return "".join(ordered) or "a model"
    return ", ".join(ordered[:-1]) + " or " + ordered[-1]


__all__ = ["PREFIX_BYTES", "ForeignFormat", "ForeignKind", "describe_directory", "file_error",
           "identify", "readable_text"]
