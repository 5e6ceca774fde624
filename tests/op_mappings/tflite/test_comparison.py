"""Comparisons vs LiteRT (bool outputs), float, int32 and int8 with equal parameters."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import Quant, check, one_op, rand

OPS = ["LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "EQUAL", "NOT_EQUAL"]


@pytest.mark.parametrize("op", OPS)
def test_float(op: str) -> None:
    a = np.round(rand(2, 4, low=-2, high=2))
    b = np.round(rand(4, low=-2, high=2, seed=1))
    check(one_op(op, [a, b], out_dtype="bool"), [a, b])


@pytest.mark.parametrize("op", ["LESS", "EQUAL"])
def test_int(op: str) -> None:
    a, b = np.array([1, 5, -3], np.int32), np.array([2, 5, -4], np.int32)
    check(one_op(op, [a, b], out_dtype="bool"), [a, b])


def test_int8_same_params() -> None:
    a = rand(8, low=-10, high=10, dtype="int8")
    b = rand(8, low=-10, high=10, seed=1, dtype="int8")
    q = Quant([0.1], [1])
    check(one_op("GREATER", [a, b], out_dtype="bool", quant_in=[q, q], version=2), [a, b])
