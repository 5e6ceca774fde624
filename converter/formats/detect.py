"""Which source format a model file is in.

`detect_format` looks at the file: TFLite flatbuffers carry the identifier ``TFL3`` at byte
offset 4; anything else is treated as ONNX (the ONNX reader reports a clear error when it is
not).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InvalidModel

FORMATS = ("onnx", "tflite")


def model_label(model: str | os.PathLike[str] | bytes) -> str:
    """A short display name for messages."""
    if isinstance(model, (bytes, bytearray)):
        return "<bytes>"
    return str(model)


def detect_format(model: str | os.PathLike[str] | bytes) -> str:
    """"tflite" when the data has the TFLite file identifier (``TFL3`` at offset 4) or the
    path ends in ``.tflite`` and is too short to tell, else "onnx".

    Raises `InvalidModel` for a path that is not an existing file.
    """
    if isinstance(model, (bytes, bytearray)):
        head = bytes(model[:8])
        suffix = ""
    else:
        path = Path(model)
        if not path.is_file():
            raise InvalidModel(f"model file {str(path)!r} does not exist or is not a file")
        with open(path, "rb") as f:
            head = f.read(8)
        suffix = path.suffix.lower()
    if len(head) >= 8 and head[4:8] == b"TFL3":
        return "tflite"
    if suffix == ".tflite":
        return "tflite"
    return "onnx"
