"""MLGraphBuilder operators: pool family (not yet implemented)."""

from __future__ import annotations

from ..base import BuilderBase


class PoolOps(BuilderBase):
    pass
