"""MLGraphBuilder operators: gather family (not yet implemented)."""

from __future__ import annotations

from ..base import BuilderBase


class GatherOps(BuilderBase):
    pass
