"""CONV_2D vs the LiteRT interpreter: padding, strides, dilation, groups, activations,
int8 per-channel and hybrid weights."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import ModelBuilder, Quant, S, check, rand


def conv_options(padding: int = 0, stride: tuple[int, int] = (1, 1),
                 dilation: tuple[int, int] = (1, 1), act: int = 0) -> S.Conv2DOptionsT:
    o = S.Conv2DOptionsT()
    o.padding, (o.strideH, o.strideW) = padding, stride
    o.dilationHFactor, o.dilationWFactor = dilation
    o.fusedActivationFunction = act
    return o


def out_size(size: int, k: int, s: int, d: int, padding: int) -> int:
    eff = (k - 1) * d + 1
    return -(-size // s) if padding == 0 else (size - eff) // s + 1


def conv_model(x_shape, w_shape, opts, bias=True, groups=1, quant=False):
    n, h, w_, c = x_shape
    o, kh, kw, _ = w_shape
    oh = out_size(h, kh, opts.strideH, opts.dilationHFactor, opts.padding)
    ow = out_size(w_, kw, opts.strideW, opts.dilationWFactor, opts.padding)
    mb = ModelBuilder()
    wv = rand(*w_shape, seed=3)
    if quant:
        ws = np.abs(wv).reshape(o, -1).max(1) / 127
        x = mb.input("x", x_shape, "int8", quant=Quant([0.02], [3]))
        wq = np.clip(np.round(wv / ws[:, None, None, None]), -127, 127).astype(np.int8)
        w = mb.const("w", wq, quant=Quant(ws, [0] * o, 0))
        bq = rand(o, low=-300, high=300, seed=4, dtype="int32")
        b = mb.const("b", bq, quant=Quant(0.02 * ws, [0] * o, 0)) if bias else -1
        y = mb.tensor("y", [n, oh, ow, o], "int8", quant=Quant([0.05], [-2]))
    else:
        x = mb.input("x", x_shape)
        w = mb.const("w", wv)
        b = mb.const("b", rand(o, seed=4)) if bias else -1
        y = mb.tensor("y", [n, oh, ow, o])
    mb.output(y)
    mb.op("CONV_2D", [x, w, b], [y], opts, version=3)
    return mb.build()


@pytest.mark.parametrize("padding", [0, 1])
@pytest.mark.parametrize("stride,dilation", [((1, 1), (1, 1)), ((2, 2), (1, 1)),
                                             ((2, 1), (1, 1)), ((1, 1), (2, 3))])
def test_float(padding: int, stride, dilation) -> None:
    m = conv_model([1, 7, 8, 3], [4, 3, 2, 3], conv_options(padding, stride, dilation))
    check(m, [rand(1, 7, 8, 3)])


@pytest.mark.parametrize("act", [0, 1, 2, 3, 4])
def test_activation(act: int) -> None:
    m = conv_model([1, 5, 5, 2], [3, 3, 3, 2], conv_options(act=act))
    check(m, [rand(1, 5, 5, 2, low=-3, high=3)])


def test_grouped() -> None:
    m = conv_model([1, 5, 6, 4], [6, 3, 3, 2], conv_options(padding=0, stride=(2, 2)))
    check(m, [rand(1, 5, 6, 4)])


def test_int8_per_channel() -> None:
    m = conv_model([1, 6, 6, 3], [4, 3, 3, 3], conv_options(padding=0, stride=(2, 2), act=1),
                   quant=True)
    x = rand(1, 6, 6, 3, low=-128, high=127, dtype="int8")
    result = check(m, [x], steps=1)
    assert result.input_descriptors["x"].data_type == "int8"
    assert result.output_descriptors["y"].data_type == "int8"
    ops = result.report.to_dict()["ops"]["CONV_2D"]["webnn_ops"]
    assert "dequantizeLinear" in ops and "quantizeLinear" in ops


def test_hybrid_int8_weights() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [1, 4, 4, 2])
    wv = rand(3, 1, 1, 2, seed=2)
    ws = np.abs(wv).reshape(3, -1).max(1) / 127
    wq = np.round(wv / ws[:, None, None, None]).astype(np.int8)
    w = mb.const("w", wq, quant=Quant(ws, [0, 0, 0], 0))
    y = mb.output(mb.tensor("y", [1, 4, 4, 3]))
    b = mb.const("b", rand(3, seed=5))
    mb.op("CONV_2D", [x, w, b], [y], conv_options(padding=1), version=2)
    # LiteRT quantizes activations on the fly in hybrid kernels: looser tolerance
    check(mb.build(), [rand(1, 4, 4, 2)], atol=0.02)

