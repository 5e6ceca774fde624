"""ADD/SUB/MUL/DIV (+ fused activations), MAXIMUM, MINIMUM, POW, SQUARED_DIFFERENCE,
FLOOR_DIV, FLOOR_MOD vs LiteRT, float, int32 and int8 quantized."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import Quant, S, check, one_op, rand


def _opts(op: str, act: int = 0):
    cls = {"ADD": S.AddOptionsT, "SUB": S.SubOptionsT, "MUL": S.MulOptionsT,
           "DIV": S.DivOptionsT}.get(op)
    if cls is None:
        return None
    o = cls()
    o.fusedActivationFunction = act
    return o


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL", "DIV"])
@pytest.mark.parametrize("act", [0, 1, 3])
def test_arithmetic_broadcast(op: str, act: int) -> None:
    a, b = rand(2, 3, 4, low=-3, high=3), rand(4, low=0.5, high=2, seed=1)
    check(one_op(op, [a, b], _opts(op, act), version=2), [a, b])


@pytest.mark.parametrize("op", ["MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE"])
def test_other(op: str) -> None:
    a, b = rand(2, 3), rand(2, 3, seed=1)
    check(one_op(op, [a, b]), [a, b])


def test_pow() -> None:
    a, b = rand(2, 3, low=0.2, high=2), rand(2, 3, low=-2, high=2, seed=1)
    check(one_op("POW", [a, b]), [a, b])


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM"])
def test_int32(op: str) -> None:
    a = np.array([[7, -7, 9], [-9, 5, 100]], np.int32)
    b = np.array([2, 3, -4], np.int32)
    check(one_op(op, [a, b], _opts(op)), [a, b])


@pytest.mark.parametrize("op", ["FLOOR_DIV", "FLOOR_MOD"])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_floor(op: str, dtype: str) -> None:
    a = np.array([[7, -7, 9, -9], [5, -5, 0, 3]], dtype)
    b = np.array([2, 3, -4, -2], dtype)
    if dtype == "float32":
        a = a + np.float32(0.5)
    check(one_op(op, [a, b]), [a, b])


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
def test_int8(op: str) -> None:
    a = rand(2, 6, low=-128, high=127, dtype="int8")
    b = rand(2, 6, low=-128, high=127, seed=1, dtype="int8")
    m = one_op(op, [a, b], _opts(op, 1), quant_in=[Quant([0.05], [3]), Quant([0.03], [-5])],
               quant_out=Quant([0.08], [-1]), version=2)
    check(m, [a, b], steps=1)
