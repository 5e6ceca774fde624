"""MLGraphBuilder operators: conv family (not yet implemented)."""

from __future__ import annotations

from ..base import BuilderBase


class ConvOps(BuilderBase):
    pass
