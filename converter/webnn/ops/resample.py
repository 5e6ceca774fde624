"""MLGraphBuilder operators: resample family (not yet implemented)."""

from __future__ import annotations

from ..base import BuilderBase


class ResampleOps(BuilderBase):
    pass
