"""Helpers shared by ONNX handlers (not a mapping module: no handlers here)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from converter.errors import InvalidModel


def norm_axis(axis: int, rank: int, what: str = "axis") -> int:
    """ONNX axis in [-rank, rank) -> WebNN's unsigned axis."""
    a = int(axis)
    if not -rank <= a < rank:
        raise InvalidModel(f"{what} {a} is out of range for rank {rank}")
    return a + rank if a < 0 else a


def norm_axes(axes: Sequence[int] | np.ndarray, rank: int, what: str = "axes") -> list[int]:
    out = [norm_axis(int(a), rank, what) for a in np.asarray(axes).reshape(-1)]
    if len(set(out)) != len(out):
        raise InvalidModel(f"{what} {list(out)} repeats an axis")
    return out


def ints(value: Any) -> list[int]:
    """A constant or attribute as a list of Python ints."""
    return [int(v) for v in np.asarray(value).reshape(-1)]
