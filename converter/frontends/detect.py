"""Which front end reads a model: by content first, by suffix only when the content is too
short to tell.

Each registered front end's `sniff(head, suffix)` is asked in registration order; the first
that claims the file wins. A file nobody claims goes to the fallback front end (ONNX), whose
reader reports a clear error when it is not one.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InvalidModel
from .base import registered

HEAD_BYTES = 64
"""How many leading bytes `sniff` functions see."""


def model_label(model: str | os.PathLike[str] | bytes) -> str:
    """A short display name for messages."""
    if isinstance(model, (bytes, bytearray)):
        return "<bytes>"
    return str(model)


def detect_format(model: str | os.PathLike[str] | bytes) -> str:
    """The name of the front end that reads `model` (a path or the file's bytes).

    Raises `InvalidModel` for a path that is not an existing file, and when no front end
    claims the file and none is the fallback.
    """
    if isinstance(model, (bytes, bytearray)):
        head = bytes(model[:HEAD_BYTES])
        suffix = ""
    else:
        path = Path(model)
        if not path.is_file():
            raise InvalidModel(f"model file {str(path)!r} does not exist or is not a file")
        with open(path, "rb") as f:
            head = f.read(HEAD_BYTES)
        suffix = path.suffix.lower()
    frontends = registered()
    for fe in frontends.values():
        if fe.sniff(head, suffix):
            return fe.name
    for fe in frontends.values():
        if fe.fallback:
            return fe.name
    raise InvalidModel(f"{model_label(model)}: not a model format this converter reads "
                       f"({', '.join(f.label for f in frontends.values())})")
