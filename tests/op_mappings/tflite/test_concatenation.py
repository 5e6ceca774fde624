"""CONCATENATION vs LiteRT: negative axis, fused activation (ignored by LiteRT), int8 (LiteRT requires
equal parameters)."""

from __future__ import annotations

import pytest

from tests.op_mappings.tflite.tflite_builder import Quant, S, check, one_op, rand


def _opts(axis: int, act: int = 0) -> S.ConcatenationOptionsT:
    o = S.ConcatenationOptionsT()
    o.axis, o.fusedActivationFunction = axis, act
    return o


@pytest.mark.parametrize("axis,act", [(1, 0), (-1, 1), (0, 3)])
def test_float(axis: int, act: int) -> None:
    a, b = rand(2, 3, 2, low=-8, high=8), rand(2, 3, 2, seed=1, low=-8, high=8)
    check(one_op("CONCATENATION", [a, b], _opts(axis, act)), [a, b])


def test_int8() -> None:
    a = rand(1, 2, 3, low=-128, high=127, dtype="int8")
    b = rand(1, 2, 3, low=-128, high=127, seed=1, dtype="int8")
    q = Quant([0.1], [1])
    m = one_op("CONCATENATION", [a, b], _opts(2), quant_in=[q, q], quant_out=q)
    check(m, [a, b], steps=0)  # LiteRT requires equal int8 parameters
