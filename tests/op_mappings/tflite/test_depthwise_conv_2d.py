"""DEPTHWISE_CONV_2D vs LiteRT: multipliers 1 and 2, SAME/VALID, strides, dilation, int8
per-channel (quantized_dimension 3)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import ModelBuilder, Quant, S, check, rand


def _opts(padding: int, stride: int, dilation: int, mult: int, act: int = 0):
    o = S.DepthwiseConv2DOptionsT()
    o.padding, o.strideH, o.strideW = padding, stride, stride
    o.dilationHFactor = o.dilationWFactor = dilation
    o.depthMultiplier, o.fusedActivationFunction = mult, act
    return o


@pytest.mark.parametrize("mult", [1, 2])
@pytest.mark.parametrize("padding,stride,dilation", [(0, 1, 1), (1, 1, 1), (0, 2, 1),
                                                     (0, 1, 2), (1, 2, 1)])
def test_float(mult: int, padding: int, stride: int, dilation: int) -> None:
    c = 3
    mb = ModelBuilder()
    x = mb.input("x", [1, 7, 6, c])
    w = mb.const("w", rand(1, 3, 3, c * mult, seed=2))
    b = mb.const("b", rand(c * mult, seed=3))
    y = mb.output(mb.tensor("y", [1, 7, 6, c * mult]))
    mb.op("DEPTHWISE_CONV_2D", [x, w, b], [y], _opts(padding, stride, dilation, mult, 3),
          version=2)
    check(mb.build(), [rand(1, 7, 6, c, low=-2, high=2)])


def test_int8_per_channel() -> None:
    c = 4
    mb = ModelBuilder()
    x = mb.input("x", [1, 5, 5, c], "int8", quant=Quant([0.03], [-4]))
    wv = rand(1, 3, 3, c, seed=2)
    ws = np.abs(wv).reshape(-1, c).max(0) / 127
    w = mb.const("w", np.round(wv / ws).astype(np.int8), quant=Quant(ws, [0] * c, 3))
    b = mb.const("b", rand(c, low=-100, high=100, dtype="int32"), quant=Quant(0.03 * ws,
                                                                             [0] * c, 0))
    y = mb.output(mb.tensor("y", [1, 5, 5, c], "int8", quant=Quant([0.04], [2])))
    mb.op("DEPTHWISE_CONV_2D", [x, w, b], [y], _opts(0, 1, 1, 1), version=3)
    check(mb.build(), [rand(1, 5, 5, c, low=-128, high=127, dtype="int8")], steps=1)
