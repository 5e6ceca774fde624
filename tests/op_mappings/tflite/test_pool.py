"""AVERAGE/MAX/L2_POOL_2D vs LiteRT (SAME padding excluded from averages, strides,
activation, int8)."""

from __future__ import annotations

import pytest

from tests.op_mappings.tflite.tflite_builder import Quant, S, check, one_op, rand


def _opts(padding: int, k: int, s: int, act: int = 0) -> S.Pool2DOptionsT:
    o = S.Pool2DOptionsT()
    o.padding, o.strideH, o.strideW = padding, s, s
    o.filterHeight, o.filterWidth, o.fusedActivationFunction = k, k, act
    return o


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D"])
@pytest.mark.parametrize("padding,k,s", [(0, 3, 2), (1, 2, 2), (0, 2, 1), (1, 3, 1)])
def test_float(op: str, padding: int, k: int, s: int) -> None:
    x = rand(1, 7, 6, 3, low=-2, high=2)
    check(one_op(op, [x], _opts(padding, k, s, act=1 if op == "MAX_POOL_2D" else 0)), [x])


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_int8(op: str) -> None:
    x = rand(1, 6, 6, 2, low=-128, high=127, dtype="int8")
    q = Quant([0.05], [3])
    m = one_op(op, [x], _opts(0, 3, 2), quant_in=[q], quant_out=q, version=2)
    check(m, [x], steps=0)


@pytest.mark.parametrize("dtype,zero_point", [("int8", -5), ("uint8", 130)])
def test_integer_average_rounds_half_away_from_zero(dtype: str, zero_point: int) -> None:
    """2x2 windows with SAME padding (counts 1, 2, 4): many means end in .5, where LiteRT
    rounds away from zero; the converted graph must match it exactly."""
    low, high = (-128, 127) if dtype == "int8" else (0, 255)
    x = rand(2, 7, 7, 3, low=low, high=high, dtype=dtype)
    q = Quant([0.1], [zero_point])
    m = one_op("AVERAGE_POOL_2D", [x], _opts(1, 2, 2), quant_in=[q], quant_out=q, version=2)
    check(m, [x], steps=0)
