"""MLGraphBuilder operators: normalization family (not yet implemented)."""

from __future__ import annotations

from ..base import BuilderBase


class NormalizationOps(BuilderBase):
    pass
