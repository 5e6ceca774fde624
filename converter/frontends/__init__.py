"""Source-format front ends behind one registry (see `converter.frontends.base`).

`get(name)`, `registered()` and `detect(model)` are what the layers above use; each built-in
front end (`converter.frontends.onnx`, `converter.frontends.tflite`) registers itself when
imported, which `load_builtin()` does on first use.
"""

from __future__ import annotations

from converter.core.errors import InvalidModel
from converter.frontends.base import BUILTIN, Frontend, load_builtin, register, registered

__all__ = ["BUILTIN", "Frontend", "get", "load_builtin", "register", "registered"]


def get(name: str) -> Frontend:
    """The front end registered as `name`; `InvalidModel` naming the known ones otherwise."""
    frontends = registered()
    if name not in frontends:
        raise InvalidModel(f"unknown model format {name!r} (known: {', '.join(frontends)})")
    return frontends[name]
