"""Runtimes that execute WebNN graphs. `get_backend(name, device)` returns a backend object
with `name`, `compile(graph) -> Executable` and `Executable.run(inputs) -> outputs`."""

from __future__ import annotations

from converter.core.webnn.backends import Backend, Executable, get_backend, register_backend

__all__ = ["Backend", "Executable", "get_backend", "register_backend"]
