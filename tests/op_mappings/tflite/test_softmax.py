"""SOFTMAX (beta) and LOG_SOFTMAX vs LiteRT, float and int8."""

from __future__ import annotations

import pytest

from tests.op_mappings.tflite.tflite_builder import Quant, S, check, one_op, rand


@pytest.mark.parametrize("beta", [1.0, 0.5, 2.0])
def test_softmax(beta: float) -> None:
    o = S.SoftmaxOptionsT()
    o.beta = beta
    x = rand(2, 3, 6, low=-5, high=5)
    check(one_op("SOFTMAX", [x], o), [x])


def test_log_softmax() -> None:
    x = rand(4, 7, low=-20, high=20)
    check(one_op("LOG_SOFTMAX", [x]), [x])


def test_softmax_int8() -> None:
    o = S.SoftmaxOptionsT()
    o.beta = 1.0
    x = rand(2, 10, low=-128, high=127, dtype="int8")
    m = one_op("SOFTMAX", [x], o, quant_in=[Quant([0.05], [0])],
               quant_out=Quant([1 / 256], [-128]), version=2)
    check(m, [x], steps=1)
