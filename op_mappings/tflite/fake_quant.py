"""FAKE_QUANT (options min, max, num_bits, narrow_range) -> clamp / sub / mul / floor /
mul / add in float32, bit-exact with LiteRT (`reference_ops::FakeQuant`).

The range is nudged at conversion time in float32 exactly as `NudgeQuantizationRange`:
scale = (max - min) / (qmax - qmin), zero point = round-half-away(qmin - min / scale)
clamped to [qmin, qmax], nudged_min = (qmin - zp)·scale, nudged_max = (qmax - zp)·scale,
with qmin = 0 and qmax = 2^num_bits - 1. Then per element
`round(clamp(x, nudged_min, nudged_max) - nudged_min) · (1 / scale)) · scale + nudged_min`,
where round is half away from zero (the shifted value is never negative, so
floor(v) + (v - floor(v) >= 0.5)); each step rounds to float32 like the kernel.
Restrictions: float32 / float16 input (float16 computed in float32 and cast back); the
range must satisfy min < max; narrow_range is rejected, as LiteRT's kernel rejects it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute, UnsupportedDataType
from converter.core.ir import Node
from converter.core.webnn import decompose as dc
from converter.core.webnn.dtypes import FLOAT_TYPES
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op


def _round_half_away(v: np.float32) -> np.float32:
    return np.float32(np.sign(v) * np.floor(np.abs(v) + np.float32(0.5)))


def nudge(rmin: float, rmax: float, qmin: int, qmax: int
          ) -> tuple[np.float32, np.float32, np.float32]:
    """(nudged_min, nudged_max, nudged_scale) in float32 as LiteRT's NudgeQuantizationRange."""
    f32 = np.float32
    lo, hi = f32(rmin), f32(rmax)
    qlo, qhi = f32(qmin), f32(qmax)
    scale = f32((hi - lo) / (qhi - qlo))
    zp_from_min = f32(qlo - f32(lo / scale))
    if zp_from_min < qlo:
        zp = f32(qmin)
    elif zp_from_min > qhi:
        zp = f32(qmax)
    else:
        zp = _round_half_away(zp_from_min)
    return f32((qlo - zp) * scale), f32((qhi - zp) * scale), scale


@tflite_op("FAKE_QUANT", since=1)
def fake_quant(ctx: ImportContext, node: Node) -> Outputs:
    """Quantize-dequantize with the nudged range (bit-exact). Restrictions: float input;
    narrow_range rejected (as LiteRT)."""
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    dt = x.data_type
    if dt not in FLOAT_TYPES:
        raise UnsupportedDataType(f"FAKE_QUANT input type {dt} is not supported (float)")
    a = node.attrs
    rmin, rmax, bits = float(a["min"]), float(a["max"]), int(a["num_bits"])
    if not rmin < rmax:
        raise InvalidModel(f"FAKE_QUANT range [{rmin}, {rmax}] is empty")
    if not 1 <= bits <= 16:
        raise InvalidModel(f"FAKE_QUANT num_bits {bits} is outside 1..16")
    if a["narrow_range"]:
        raise UnsupportedAttribute("FAKE_QUANT with narrow_range is not supported (LiteRT's "
                                   "kernel rejects it too: weights only)")
    nmin, nmax, scale = nudge(rmin, rmax, 0, (1 << bits) - 1)
    inv = np.float32(np.float32(1.0) / scale)
    if dt == "float16":
        x = b.cast(x, "float32")

    def c(v: np.float32) -> Any:
        return dc.scalar(b, float(v), "float32")

    clamped = b.clamp(x, min_value=float(nmin), max_value=float(nmax))
    v = b.mul(b.sub(clamped, c(nmin)), c(inv))
    fl = b.floor(v)
    up = b.cast(b.greater_or_equal(b.sub(v, fl), c(np.float32(0.5))), "float32")
    y = b.add(b.mul(b.add(fl, up), c(scale)), c(nmin))
    return [b.cast(y, dt) if dt == "float16" else y]
