"""Helpers shared by ONNX handlers (not a mapping module: no handlers here). `ints` and
`norm_axis` are the ones TFLite handlers use too (`op_mappings/_common/values.py`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from converter.errors import InvalidModel
from op_mappings._common.values import ints, norm_axis

__all__ = ["ints", "norm_axes", "norm_axis"]


def norm_axes(axes: Sequence[int] | np.ndarray, rank: int, what: str = "axes") -> list[int]:
    out = [norm_axis(int(a), rank, what) for a in np.asarray(axes).reshape(-1)]
    if len(set(out)) != len(out):
        raise InvalidModel(f"{what} {list(out)} repeats an axis")
    return out
