"""Optional packages in tests: a test whose optional package is missing (torch for the torch
backend, LiteRT for TFLite oracles) is a skip with the reason, never a failure."""

from __future__ import annotations

import importlib.util

import pytest

LITERT_MISSING = "LiteRT is not installed (pip install -e '.[tflite]')"

# the optional package each backend needs, and how to install it from a checkout
_NEEDS = {"torch": ("torch", "pip install -e '.[torch]'")}


def installed(module: str) -> bool:
    """Whether `module` can be imported here (without importing it)."""
    return importlib.util.find_spec(module) is not None


def missing(backend: str) -> str | None:
    """Why `backend` cannot run here (its package is not installed), or None."""
    need = _NEEDS.get(backend)
    if need is None or installed(need[0]):
        return None
    return f"the {backend} backend needs {need[0]}, which is not installed ({need[1]})"


def backend_params(*backends: str) -> list[object]:
    """`backends` as parameters of a `backend` argument, each skipped with the reason when its
    package is missing."""
    return [pytest.param(b, id=b, marks=pytest.mark.skipif(missing(b) is not None,
                                                           reason=missing(b) or ""))
            for b in backends]
