"""TRANSPOSE_CONV vs LiteRT (argument order, SAME/VALID output sizes, strides, bias and
fused activation) and the MediaPipe Convolution2DTransposeBias custom op (converter only:
LiteRT lacks the kernel; checked against a numpy scatter-add oracle)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import ModelBuilder, S, check, rand


def _model(x_shape, w_shape, out_hw, padding, stride, bias=True, act=0, version=4):
    mb = ModelBuilder()
    o = w_shape[0]
    shape = mb.const("shape", np.array([x_shape[0], *out_hw, o], np.int32))
    w = mb.const("w", rand(*w_shape, seed=2))
    x = mb.input("x", x_shape)
    ins = [shape, w, x]
    if bias:
        ins.append(mb.const("b", rand(o, seed=3)))
    y = mb.output(mb.tensor("y", [x_shape[0], *out_hw, o]))
    opts = S.TransposeConvOptionsT()
    opts.padding, opts.strideH, opts.strideW = padding, stride[0], stride[1]
    opts.fusedActivationFunction = act
    mb.op("TRANSPOSE_CONV", ins, [y], opts, version=version)
    return mb.build()


@pytest.mark.parametrize("out,padding", [(7, 0), (8, 0), (9, 1), (10, 1)])
def test_sizes(out: int, padding: int) -> None:
    m = _model([1, 4, 4, 2], [3, 3, 3, 2], [out, out], padding, (2, 2))
    check(m, [rand(1, 4, 4, 2)])


@pytest.mark.parametrize("k,s", [(1, 2), (2, 3), (3, 3)])
def test_stride_kernel(k: int, s: int) -> None:
    out = 3 * s
    m = _model([1, 3, 3, 1], [2, k, k, 1], [out, out], 0, (s, s))
    check(m, [rand(1, 3, 3, 1)])


def test_activation_no_bias() -> None:
    m = _model([1, 3, 4, 2], [2, 3, 3, 2], [6, 8], 0, (2, 2), bias=False, act=1)
    check(m, [rand(1, 3, 4, 2)])


def test_mediapipe_custom() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [1, 2, 3, 2])
    wv, bv = rand(3, 2, 2, 2, seed=2), rand(3, seed=3)
    w, b = mb.const("w", wv), mb.const("b", bv)
    y = mb.output(mb.tensor("y", [1, 4, 6, 3]))
    mb.op("CUSTOM", [x, w, b], [y], custom_code="Convolution2DTransposeBias",
          custom_options=struct.pack("<iii", 2, 2, 2))
    xv = rand(1, 2, 3, 2)
    res = convert_tflite(mb.build())
    got = res.run({"x": xv})["y"]
    ref = np.zeros((1, 4, 6, 3))
    for i in range(2):
        for j in range(3):
            ref[0, 2 * i:2 * i + 2, 2 * j:2 * j + 2, :] += np.einsum(
                "c,ohwc->hwo", xv[0, i, j].astype(np.float64), wv.astype(np.float64))
    np.testing.assert_allclose(got, ref + bv, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("padding", [0, 1])
def test_int8_per_channel(padding: int) -> None:
    """int8 input/output, per-channel int8 weights (axis 0), int32 bias."""
    from tests.op_mappings.tflite.tflite_builder import Quant

    x_shape, o, k, s = [1, 3, 4, 3], 4, 3, 2
    out_hw = [6, 8] if padding == 0 else [7, 9]
    mb = ModelBuilder()
    wv = rand(o, k, k, 3, seed=2)
    ws = np.abs(wv).reshape(o, -1).max(1) / 127
    wq = np.round(wv / ws[:, None, None, None]).astype(np.int8)
    shape = mb.const("shape", np.array([1, *out_hw, o], np.int32))
    w = mb.const("w", wq, quant=Quant(ws, [0] * o, 0))
    x = mb.input("x", x_shape, "int8", quant=Quant([0.03], [2]))
    b = mb.const("b", rand(o, low=-200, high=200, seed=4, dtype="int32"),
                 quant=Quant(0.03 * ws, [0] * o, 0))
    y = mb.output(mb.tensor("y", [1, *out_hw, o], "int8", quant=Quant([0.05], [-1])))
    opts = S.TransposeConvOptionsT()
    opts.padding, opts.strideH, opts.strideW = padding, s, s
    mb.op("TRANSPOSE_CONV", [shape, w, x, b], [y], opts, version=3)
    check(mb.build(), [rand(*x_shape, low=-128, high=127, dtype="int8")], steps=1)
