"""The backend protocol and registry: how an `MLContext` finds the runtime that executes its
graphs. Runtimes (converter/runtimes/) register themselves here when imported; the context only
knows their names and module paths, so the WebNN layer never imports a runtime statically."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from converter.core.webnn.graph import MLGraph


class Executable(Protocol):
    def run(self, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]: ...


class Backend(Protocol):
    name: str

    def compile(self, graph: MLGraph) -> Executable: ...


_FACTORIES: dict[str, Callable[..., Backend]] = {}
_MODULES = {"reference": "converter.runtimes.reference",
            "onnxruntime": "converter.runtimes.onnxruntime.backend",
            "torch": "converter.runtimes.torch"}


def register_backend(name: str, factory: Callable[..., Backend]) -> None:
    """Register `factory(device, **options) -> Backend` under `name`."""
    _FACTORIES[name] = factory


def get_backend(name: str, device: str = "cpu", **options: Any) -> Backend:
    """The backend called `name` for `device` with backend-specific `options` (for example
    `threads`); ValueError if unknown or unavailable."""
    if name not in _FACTORIES and name in _MODULES:
        importlib.import_module(_MODULES[name])
    if name not in _FACTORIES:
        raise ValueError(f"unknown backend {name!r} (known: {', '.join(sorted(_MODULES))})")
    return _FACTORIES[name](device, **options)
