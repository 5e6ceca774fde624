"""Exceptions raised by the WebNN graph API, named after the spec's DOMException kinds.

Every builder validation failure raises `MLTypeError` (a `TypeError`), whose message names the
operator and the rule that was broken, e.g. ``conv2d: input channels (3) / groups (2) is not an
integer``.
"""

from __future__ import annotations


class MLTypeError(TypeError):
    """A spec `TypeError`: bad argument, data type, rank, shape or option."""


class MLInvalidStateError(RuntimeError):
    """A spec `InvalidStateError`: builder used after build(), destroyed graph/tensor/context."""


class MLOperationError(RuntimeError):
    """A spec `OperationError`: a backend failed to compile or run a graph."""


class MLNotSupportedError(RuntimeError):
    """A spec `NotSupportedError`: a context with the requested options cannot be created."""
