"""MLGraphBuilder operators: reduce family (not yet implemented)."""

from __future__ import annotations

from ..base import BuilderBase


class ReduceOps(BuilderBase):
    pass
