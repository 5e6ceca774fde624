"""MLGraphBuilder operators: recurrent family (not yet implemented)."""

from __future__ import annotations

from ..base import BuilderBase


class RecurrentOps(BuilderBase):
    pass
