"""Runtimes that execute WebNN graphs: the reference (numpy) backend, onnxruntime (through the
WebNN -> ONNX lowering) and torch. Importing this package registers them with the backend
registry of `converter.core.webnn.backends` (`converter` imports it, so every context created
by name finds them); each runtime module is imported only when its backend is first asked for,
so torch is loaded only by the torch backend.

`get_backend(name, device, **options)` returns a backend object with `name`,
`compile(graph) -> Executable` and `Executable.run(inputs) -> outputs`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from converter.core.webnn.backends import get_backend, register_backend

if TYPE_CHECKING:
    from converter.core.webnn.context import Backend

__all__ = ["get_backend", "register_backend"]


def _reference(device: str, **options: Any) -> Backend:
    from converter.runtimes.reference import create_backend

    return create_backend(device, **options)


def _onnxruntime(device: str, **options: Any) -> Backend:
    from converter.runtimes.onnxruntime.backend import create_backend

    return create_backend(device, **options)


def _torch(device: str, **options: Any) -> Backend:
    from converter.runtimes.torch import create_backend

    return create_backend(device, **options)


register_backend("reference", _reference)
register_backend("onnxruntime", _onnxruntime)
register_backend("torch", _torch)
