"""FULLY_CONNECTED vs LiteRT: K from the weights, keep_num_dims, no bias, activations,
int8 per-channel and hybrid."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import ModelBuilder, Quant, S, check, rand


def _model(x_shape, n, k, keep=False, bias=True, act=0, out_shape=None):
    mb = ModelBuilder()
    x = mb.input("x", x_shape)
    w = mb.const("w", rand(n, k, seed=2))
    b = mb.const("b", rand(n, seed=3)) if bias else -1
    y = mb.output(mb.tensor("y", out_shape or [1, n]))
    o = S.FullyConnectedOptionsT()
    o.keepNumDims, o.fusedActivationFunction = keep, act
    mb.op("FULLY_CONNECTED", [x, w, b], [y], o, version=5 if keep else 1)
    return mb.build()


def test_plain() -> None:
    check(_model([3, 4], 5, 4, act=1), [rand(3, 4)])


def test_k_from_weights() -> None:
    check(_model([2, 3, 4, 5], 6, 20), [rand(2, 3, 4, 5)])


def test_keep_num_dims() -> None:
    check(_model([2, 3, 4], 5, 4, keep=True, out_shape=[2, 3, 5]), [rand(2, 3, 4)])


def test_no_bias() -> None:
    check(_model([2, 4], 3, 4, bias=False), [rand(2, 4)])


@pytest.mark.parametrize("hybrid", [False, True])
def test_int8(hybrid: bool) -> None:
    mb = ModelBuilder()
    n, k = 4, 6
    wv = rand(n, k, seed=2)
    ws = np.abs(wv).max(1) / 127
    if hybrid:
        x = mb.input("x", [2, k])
    else:
        x = mb.input("x", [2, k], "int8", quant=Quant([0.02], [1]))
    w = mb.const("w", np.round(wv / ws[:, None]).astype(np.int8),
                 quant=Quant(ws if not hybrid else [ws.max()], [0] * (n if not hybrid else 1)))
    if hybrid:
        b = mb.const("b", rand(n, seed=3))
        y = mb.output(mb.tensor("y", [2, n]))
    else:
        b = mb.const("b", rand(n, low=-50, high=50, dtype="int32"),
                     quant=Quant(0.02 * ws, [0] * n))
        y = mb.output(mb.tensor("y", [2, n], "int8", quant=Quant([0.03], [-2])))
    mb.op("FULLY_CONNECTED", [x, w, b], [y], S.FullyConnectedOptionsT(),
          version=5 if not hybrid else 3)
    if hybrid:
        check(mb.build(), [rand(2, k)], atol=0.03)
    else:
        check(mb.build(), [rand(2, k, low=-128, high=127, dtype="int8")], steps=1)
