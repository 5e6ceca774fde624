"""MLGraphBuilder operators: shape family (not yet implemented)."""

from __future__ import annotations

from ..base import BuilderBase


class ShapeOps(BuilderBase):
    pass
