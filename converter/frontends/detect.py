"""Which front end reads a model: by content first, by suffix only when the content says
nothing.

1. Each registered front end's `sniff(head, "")` is asked, in registration order, whether
   the file's first bytes are its format; the first that claims the file wins.
2. A file no front end claims by content is shown to `foreign.file_error`, which knows the
   kinds the converter does not read (TensorFlow graphs, safetensors, PyTorch and Keras
   files, WebNN graphs, archives, ...): a recognised kind is a `ForeignFormat` error saying
   what the file is and what to do.
3. Then `sniff(head, suffix)` with the file's lower-case suffix, so a damaged `.tflite`
   file reaches the TFLite reader, which says what is wrong with it.
4. A file nobody claims goes to the fallback front end (ONNX), whose reader reports a
   clear error when it is not one.

A folder given as the model is described by `foreign.describe_directory` (a SavedModel, a
folder holding model files, ...) and never read.
"""

from __future__ import annotations

import os
from pathlib import Path

from converter.core.errors import InvalidModel
from converter.core.files import NotRegularFile, open_regular
from converter.frontends import foreign
from converter.frontends.base import Frontend, registered

HEAD_BYTES = 64
"""How many leading bytes `sniff` functions see."""


def model_label(model: str | os.PathLike[str] | bytes | bytearray) -> str:
    """A short display name for messages."""
    if isinstance(model, (bytes, bytearray)):
        return "<bytes>"
    return str(model)


def _readable(frontends: dict[str, Frontend]) -> tuple[str, tuple[str, ...]]:
    """("ONNX or TFLite", the suffixes of readable files)."""
    labels = [fe.label for fe in frontends.values()]
    suffixes = tuple(s for fe in frontends.values() for s in fe.suffixes)
    return foreign.readable_text(labels), suffixes


def detect_format(model: str | os.PathLike[str] | bytes | bytearray) -> str:
    """The name of the front end that reads `model` (a path or the file's bytes).

    Raises `foreign.ForeignFormat` (an `InvalidModel`) for a folder or a file of a kind the
    converter does not read, with what to do instead; `InvalidModel` for a path that does
    not exist, and when no front end claims the file and none is the fallback.
    """
    frontends = registered()
    label = model_label(model)
    source: Path | bytes
    if isinstance(model, (bytes, bytearray)):
        source = bytes(model)
        head = source[:HEAD_BYTES]
        suffix = ""
    else:
        path = source = Path(model)
        if path.is_dir():
            readable, suffixes = _readable(frontends)
            raise foreign.describe_directory(path, label, readable, suffixes)
        try:  # a FIFO or device is refused before it is read (converter.core.files)
            with open_regular(path, "the model file") as f:
                head = f.read(HEAD_BYTES)
        except NotRegularFile as exc:
            raise InvalidModel(str(exc)) from None
        except OSError:
            raise InvalidModel(f"model file {str(path)!r} does not exist or is not a file"
                               ) from None
        suffix = path.suffix.lower()
    for fe in frontends.values():
        if fe.sniff(head, ""):
            return fe.name
    readable, suffixes = _readable(frontends)
    error = foreign.file_error(source, label, readable, suffixes)
    if error is not None:
        raise error
    for fe in frontends.values():
        if suffix and fe.sniff(head, suffix):
            return fe.name
    for fe in frontends.values():
        if fe.fallback:
            return fe.name
    raise InvalidModel(f"{label}: not a model format this converter reads "
                       f"({', '.join(f.label for f in frontends.values())})")
