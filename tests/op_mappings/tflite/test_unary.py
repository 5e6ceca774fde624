"""Unary element-wise ops vs LiteRT."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import Quant, check, one_op, rand


@pytest.mark.parametrize("op", ["ABS", "CEIL", "COS", "EXP", "FLOOR", "NEG", "SIN", "SIGN",
                                "SQUARE", "ROUND"])
def test_float(op: str) -> None:
    x = rand(2, 3, 4, low=-3, high=3)
    x[0, 0, :2] = [0.5, -1.5]  # round ties
    check(one_op(op, [x]), [x])


@pytest.mark.parametrize("op", ["LOG", "SQRT", "RSQRT"])
def test_positive(op: str) -> None:
    x = rand(3, 4, low=0.1, high=5)
    check(one_op(op, [x]), [x])


@pytest.mark.parametrize("op", ["ABS", "NEG"])
def test_int32(op: str) -> None:
    x = np.array([[-3, 0, 5]], np.int32)
    check(one_op(op, [x]), [x])


def test_int8_rsqrt() -> None:
    x = rand(1, 8, low=1, high=127, dtype="int8")
    m = one_op("RSQRT", [x], quant_in=[Quant([0.1], [0])], quant_out=Quant([0.01], [-128]),
               version=2)
    check(m, [x], steps=1)
