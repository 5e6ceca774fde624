"""ML (`navigator.ml`): the entry point that creates a context on a registered backend."""

from __future__ import annotations

from typing import Any

from converter.core.webnn.backends import get_backend
from converter.core.webnn.context import MLContext
from converter.core.webnn.errors import MLNotSupportedError, MLTypeError

POWER_PREFERENCES = ("default", "high-performance", "low-power")


class ML:
    """Entry point (`navigator.ml`)."""

    def create_context(self, *, backend: str = "reference", device: str = "cpu",
                       power_preference: str = "default", accelerated: bool = True,
                       device_type: str | None = None, **backend_options: Any) -> MLContext:
        """A context running graphs on `backend` ("reference" is the numpy oracle) and
        `device`; `backend_options` go to the backend (for example `threads`).

        `device_type` was removed from the spec; it is accepted and ignored as browsers do.
        """
        if power_preference not in POWER_PREFERENCES:
            raise MLTypeError(f"createContext: powerPreference {power_preference!r} is not one "
                              f"of {POWER_PREFERENCES}")
        try:
            impl = get_backend(backend, device, **backend_options)
        except (KeyError, ValueError) as exc:
            raise MLNotSupportedError(f"createContext: {exc}") from exc
        return MLContext(impl, power_preference=power_preference, accelerated=accelerated)
