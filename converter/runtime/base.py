"""Backend protocol and registry."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from ..webnn.graph import MLGraph


class Executable(Protocol):
    def run(self, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]: ...


class Backend(Protocol):
    name: str

    def compile(self, graph: MLGraph) -> Executable: ...


_FACTORIES: dict[str, Callable[[str], Backend]] = {}
_MODULES = {"reference": "converter.runtime.reference"}


def register_backend(name: str, factory: Callable[[str], Backend]) -> None:
    """Register `factory(device) -> Backend` under `name`."""
    _FACTORIES[name] = factory


def get_backend(name: str, device: str = "cpu") -> Backend:
    """The backend called `name` for `device`; ValueError if unknown or unavailable."""
    if name not in _FACTORIES and name in _MODULES:
        importlib.import_module(_MODULES[name])
    if name not in _FACTORIES:
        raise ValueError(f"unknown backend {name!r} (known: {', '.join(sorted(_MODULES))})")
    return _FACTORIES[name](device)
