"""MLGraphBuilder operators: linalg family (not yet implemented)."""

from __future__ import annotations

from ..base import BuilderBase


class LinalgOps(BuilderBase):
    pass
