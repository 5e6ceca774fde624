"""MLGraphBuilder operators: quantize family (not yet implemented)."""

from __future__ import annotations

from ..base import BuilderBase


class QuantizeOps(BuilderBase):
    pass
