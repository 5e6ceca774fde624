"""Source-format front ends behind one registry (see `converter.frontends.base`).

`get(name)`, `registered()` and `detect(model)` are what the layers above use; each built-in
front end (`converter.frontends.onnx`, `converter.frontends.tflite`) registers itself when
imported, which `load_builtin()` does on first use.
"""

from __future__ import annotations

import importlib

from ..errors import InvalidModel
from .base import Frontend, register, registered

__all__ = ["Frontend", "get", "load_builtin", "register", "registered"]

BUILTIN = ("converter.frontends.tflite", "converter.frontends.onnx")
"""The front-end packages shipped with the converter, in detection order."""

_loaded = False


def load_builtin() -> None:
    """Import the built-in front-end packages (idempotent; they are light: their heavy
    implementation modules load on first use)."""
    global _loaded
    if not _loaded:
        _loaded = True
        for module in BUILTIN:
            importlib.import_module(module)


def get(name: str) -> Frontend:
    """The front end registered as `name`; `InvalidModel` naming the known ones otherwise."""
    frontends = registered()
    if name not in frontends:
        raise InvalidModel(f"unknown model format {name!r} (known: {', '.join(frontends)})")
    return frontends[name]
