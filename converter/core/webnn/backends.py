"""The backend registry: how `ML.create_context(backend=...)` finds the runtime that executes
its graphs. Runtimes register from above (`converter.runtimes` registers the built-in ones
when imported, and `converter` imports it); this layer names none of them.

Restriction: importing this module stays cheap (no numpy): the backend types are needed only
by the type checker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from converter.core.webnn.context import Backend

_FACTORIES: dict[str, Callable[..., Backend]] = {}


def register_backend(name: str, factory: Callable[..., Backend]) -> None:
    """Register `factory(device, **options) -> Backend` under `name`."""
    _FACTORIES[name] = factory


def get_backend(name: str, device: str = "cpu", **options: Any) -> Backend:
    """The backend called `name` for `device` with backend-specific `options` (for example
    `threads`); ValueError if unknown or unavailable."""
    factory = _FACTORIES.get(name)
    if factory is None:
        raise ValueError(f"unknown backend {name!r} (known: {', '.join(sorted(_FACTORIES))})")
    return factory(device, **options)
