"""FAKE_QUANT vs LiteRT (bit-exact): 8-bit and 4-bit ranges, asymmetric, all-positive and
all-negative ranges (zero point clamped), 16-bit, inputs outside the range and on
quantization ties; empty ranges and narrow_range (LiteRT rejects it) rejected."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.errors import ConversionFailed
from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import In, S, check, op_model, rand


def model(x: np.ndarray, lo: float, hi: float, bits: int = 8, narrow: bool = False):
    o = S.FakeQuantOptionsT()
    o.min, o.max, o.numBits, o.narrowRange = lo, hi, bits, narrow
    return op_model("FAKE_QUANT", [In(x)], [(x.shape, "float32")], o)


@pytest.mark.parametrize("lo,hi", [(-1.0, 1.0), (-0.3, 2.7), (0.0, 6.0), (-6.0, 0.0),
                                   (0.5, 3.0), (-3.0, -0.5), (-1e-3, 1e-3)])
@pytest.mark.parametrize("bits", [8, 4, 16])
def test_ranges(lo: float, hi: float, bits: int) -> None:
    span = hi - lo
    x = rand(4, 64, low=lo - 0.3 * span, high=hi + 0.3 * span, seed=bits)
    m, feeds = model(x, lo, hi, bits)
    check(m, feeds, rtol=0, atol=0)


def test_ties() -> None:
    # values exactly halfway between quantization levels (scale 1/255·2 on [-1, 1])
    lo, hi = -1.0, 1.0
    scale = np.float32(2.0) / np.float32(255)
    k = np.arange(-100, 100, dtype=np.float32)
    x = (k + np.float32(0.5)) * scale
    m, feeds = model(x.astype(np.float32).reshape(1, -1), lo, hi)
    check(m, feeds, rtol=0, atol=0)


@pytest.mark.parametrize("lo,hi,narrow,rule", [(1.0, 1.0, False, "is empty"),
                                               (-1.0, 1.0, True, "narrow_range")])
def test_rejected(lo: float, hi: float, narrow: bool, rule: str) -> None:
    m, _ = model(rand(2, 2), lo, hi, narrow=narrow)
    with pytest.raises(ConversionFailed, match=rule):
        convert_tflite(m)
