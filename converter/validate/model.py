"""Loading a model file of either source format: format detection and conversion dispatch.

`detect_format` looks at the file: TFLite flatbuffers carry the identifier ``TFL3`` at byte
offset 4; anything else is treated as ONNX (the ONNX reader reports a clear error when it is
not). `convert_model` converts with `converter.convert` (ONNX) or
`converter.api_tflite.convert_tflite` (TFLite) and checks that the options given make sense
for that format.

Restrictions: TFLite models have no named free dimensions (`free_dims` is rejected; use
`input_shapes`) and no input pinning.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

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


def convert_model(model: str | os.PathLike[str] | bytes, *,
                  free_dims: Mapping[str, int] | None = None,
                  input_shapes: Mapping[str, Sequence[int]] | None = None,
                  pin_inputs: Mapping[str, Any] | None = None,
                  signature: str | None = None, fmt: str | None = None) -> Any:
    """Convert an ONNX or TFLite model (detected with `detect_format` unless `fmt` is given)
    and return the `ConversionResult`.

    Raises `InvalidModel` for options the format does not have (a `signature` for ONNX,
    `free_dims`/`pin_inputs` for TFLite) and whatever the converter raises
    (`InvalidModel`, `ConversionFailed`, ...).
    """
    fmt = fmt or detect_format(model)
    label = model_label(model)
    if fmt == "tflite":
        if free_dims:
            raise InvalidModel(f"{label}: TFLite models have no named free dimensions "
                               f"({', '.join(sorted(free_dims))}); fix dynamic dimensions "
                               "with input shapes (--shape INPUT=D1,D2,...)")
        if pin_inputs:
            raise InvalidModel(f"{label}: pinning inputs is only supported for ONNX models")
        from ..api_tflite import convert_tflite

        return convert_tflite(model, signature=signature, input_shapes=input_shapes)
    if fmt != "onnx":
        raise InvalidModel(f"unknown model format {fmt!r} (known: {', '.join(FORMATS)})")
    if signature:
        raise InvalidModel(f"{label}: --signature applies to TFLite models only")
    from ..api import convert

    return convert(model, free_dims=free_dims, input_shapes=input_shapes,
                   pin_inputs=pin_inputs)
