"""MLGraphBuilder operators: resample2d.

Restrictions (spec): the input is 4-D; exactly two distinct resampled axes; scales are
positive finite floats (rounded to float32, as the IDL type `float` does); sizes are valid
dimensions and override scales. The output size along each axis is `sizes[i]` or
floor(inputSize * scales[i]); the coordinate mapping always uses the spec's
scale = outputSize / inputSize (half-pixel), so pass `sizes` for exact control.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from converter.core.webnn import validation as v
from converter.core.webnn.base import BuilderBase
from converter.core.webnn.operand import MLOperand

RESAMPLE_MODES = ("nearest-neighbor", "linear")


def _float32(op: str, what: str, value: object) -> float:
    """A WebIDL `float`: a finite number that stays finite when rounded to float32."""
    number = v.number(op, what, value)
    if not math.isfinite(number):
        raise v.fail(op, f"{what} must be finite, got {number}")
    with np.errstate(over="ignore"):
        rounded = float(np.float32(number))
    if not math.isfinite(rounded):
        raise v.fail(op, f"{what} ({number}) is out of the float range")
    return rounded


class ResampleOps(BuilderBase):
    def resample2d(self, input: MLOperand, *, mode: str = "nearest-neighbor",
                   scales: Sequence[float] | None = None, sizes: Sequence[int] | None = None,
                   axes: Sequence[int] | None = None, label: str = "") -> MLOperand:
        """Resize two axes (default [2, 3]) of a 4-D tensor, by `sizes` or by `scales`
        (default [1.0, 1.0]); mode "nearest-neighbor" (half-pixel, ties round down) or
        "linear" (bilinear, half-pixel, clamped to the edge)."""
        op = "resample2d"
        x = self._operand(op, "input", input)
        v.enum(op, "mode", mode, RESAMPLE_MODES)
        if scales is None:
            sc = [1.0, 1.0]
        else:
            if isinstance(scales, (str, bytes)) or not isinstance(scales, Sequence):
                raise v.fail(op, f"scales must be a sequence of 2 numbers, got {scales!r}")
            sc = [_float32(op, "scales item", s) for s in scales]
            if len(sc) != 2:
                raise v.fail(op, f"scales must have 2 items, got {len(sc)}")
            for s in sc:
                if s <= 0:
                    raise v.fail(op, f"scales {sc} must be greater than 0")
        sz = None
        if sizes is not None:
            sz = v.unsigned_list(op, "sizes", sizes, 2)
            if 0 in sz:
                raise v.fail(op, f"sizes {list(sz)} must not contain 0")
        if axes is None:
            ax: tuple[int, ...] = (2, 3)
        else:
            ax = v.axes(op, "axes", axes, x.rank)
            if len(ax) != 2:
                raise v.fail(op, f"axes must have 2 items, got {len(ax)}")
        shape = list(x.shape)
        for i, a in enumerate(ax):
            size = sz[i] if sz is not None else math.floor(x.shape[a] * sc[i])
            v.dimension(op, f"output size along axis {a}", size)
            shape[a] = size
        options = {"mode": mode, "scales": sc, "axes": list(ax),
                   "sizes": None if sz is None else list(sz), "label": label or None}
        return self._emit1(op, (x,), options, x.data_type, shape)
