"""Activations vs LiteRT: relu family, logistic, tanh, elu, hard_swish, leaky_relu, prelu,
gelu (exact and approximate), and int8 variants."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import Quant, S, check, one_op, rand


@pytest.mark.parametrize("op", ["RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1", "LOGISTIC",
                                "TANH", "ELU", "HARD_SWISH"])
def test_float(op: str) -> None:
    x = rand(2, 3, 5, low=-8, high=8)
    check(one_op(op, [x]), [x])


def test_leaky_relu() -> None:
    o = S.LeakyReluOptionsT()
    o.alpha = 0.3
    x = rand(2, 7, low=-3, high=3)
    check(one_op("LEAKY_RELU", [x], o), [x])


def test_prelu_broadcast() -> None:
    x = rand(1, 3, 4, 5, low=-3, high=3)
    alpha = rand(1, 1, 5, low=0, high=0.5, seed=1)
    check(one_op("PRELU", [x, alpha], constants=[1]), [x])


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu(approximate: bool) -> None:
    o = S.GeluOptionsT()
    o.approximate = approximate
    x = rand(3, 8, low=-4, high=4)
    check(one_op("GELU", [x], o), [x])


@pytest.mark.parametrize("op,scale_out,zp_out", [("RELU", 0.05, -128), ("RELU6", 6 / 255, -128),
                                                 ("LOGISTIC", 1 / 256, -128),
                                                 ("TANH", 1 / 128, 0),
                                                 ("HARD_SWISH", 0.05, -30)])
def test_int8(op: str, scale_out: float, zp_out: int) -> None:
    x = rand(1, 4, 8, low=-128, high=127, dtype="int8")
    m = one_op(op, [x], quant_in=[Quant([0.05], [0])], quant_out=Quant([scale_out], [zp_out]),
               version=1 if op == "HARD_SWISH" else 2)
    check(m, [x], steps=1)


def test_uint8_relu() -> None:
    x = rand(2, 8, low=0, high=255, dtype="uint8")
    m = one_op("RELU", [x], quant_in=[Quant([0.1], [128])], quant_out=Quant([0.05], [0]))
    check(m, [x], steps=1)
    assert np.dtype("uint8") == x.dtype


def test_prelu_int8() -> None:
    """int8 PRELU with an int8 alpha [1, 1, C] (LiteRT's int8 kernel reads one alpha scale,
    so per-channel alpha has no oracle)."""
    from tests.op_mappings.tflite.tflite_builder import ModelBuilder

    mb = ModelBuilder()
    x = mb.input("x", [1, 3, 4, 4], "int8", quant=Quant([0.05], [-3]))
    alpha = rand(1, 1, 4, low=-60, high=100, seed=2, dtype="int8")
    a = mb.const("alpha", alpha, quant=Quant([0.004], [0]))
    y = mb.output(mb.tensor("y", [1, 3, 4, 4], "int8", quant=Quant([0.04], [-10])))
    mb.op("PRELU", [x, a], [y])
    check(mb.build(), [rand(1, 3, 4, 4, low=-128, high=127, dtype="int8")], steps=1)
