"""CONV_3D and CONV_3D_TRANSPOSE vs LiteRT: SAME/VALID padding, strides and dilations per
axis, fused activations, with and without bias, batch 2, computed (non-constant) filters,
CONV_3D_TRANSPOSE output sizes with and without the extra stride remainder."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.errors import ConversionFailed
from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import In, S, check, op_model, rand

SAME, VALID = 0, 1


def options(padding: int = SAME, strides=(1, 1, 1), dilations=(1, 1, 1),
            act: int = 0) -> S.Conv3DOptionsT:
    o = S.Conv3DOptionsT()
    o.padding = padding
    o.strideD, o.strideH, o.strideW = strides
    o.dilationDFactor, o.dilationHFactor, o.dilationWFactor = dilations
    o.fusedActivationFunction = act
    return o


def out_size(size: int, k: int, s: int, d: int, padding: int) -> int:
    eff = (k - 1) * d + 1
    return -(-size // s) if padding == SAME else (size - eff) // s + 1


def conv3d(x_shape, w_shape, opts, *, bias: bool = True, const_w: bool = True):
    x = rand(*x_shape, seed=1)
    w = rand(*w_shape, seed=2)
    k = w_shape[:3]
    s = (opts.strideD, opts.strideH, opts.strideW)
    d = (opts.dilationDFactor, opts.dilationHFactor, opts.dilationWFactor)
    out = [x_shape[0], *(out_size(x_shape[1 + i], k[i], s[i], d[i], opts.padding)
                         for i in range(3)), w_shape[4]]
    ins = [In(x), In(w, const_w), In(rand(w_shape[4], seed=3), True) if bias else None]
    return op_model("CONV_3D", ins, [(out, "float32")], opts)


@pytest.mark.parametrize("padding", [SAME, VALID])
@pytest.mark.parametrize("strides,dilations", [
    ((1, 1, 1), (1, 1, 1)), ((2, 1, 2), (1, 1, 1)), ((2, 2, 2), (1, 1, 1)),
    ((1, 1, 1), (2, 1, 2)), ((3, 2, 1), (1, 2, 1))])
def test_conv3d(padding: int, strides, dilations) -> None:
    m, feeds = conv3d([1, 7, 6, 8, 3], [3, 2, 3, 3, 4], options(padding, strides, dilations))
    check(m, feeds)


@pytest.mark.parametrize("act", [0, 1, 2, 3])
def test_conv3d_activation(act: int) -> None:
    m, feeds = conv3d([2, 4, 5, 5, 2], [2, 3, 3, 2, 3], options(act=act))
    feeds = [f * 3 for f in feeds]
    check(m, feeds)


def test_conv3d_no_bias_kernel_depth_one() -> None:
    m, feeds = conv3d([1, 3, 4, 4, 2], [1, 3, 3, 2, 5], options(VALID), bias=False)
    check(m, feeds)


def test_conv3d_computed_filter() -> None:
    m, feeds = conv3d([1, 5, 5, 4, 2], [3, 2, 2, 2, 3], options(SAME, (2, 1, 1)),
                      const_w=False)
    check(m, feeds)


def conv3d_t(x_shape, w_shape, out_dhw, opts, *, bias: bool = True, const_w: bool = True):
    x = rand(*x_shape, seed=4)
    w = rand(*w_shape, seed=5)
    out = [x_shape[0], *out_dhw, w_shape[3]]
    ins = [In(np.array(out, np.int32), True), In(w, const_w), In(x),
           In(rand(w_shape[3], seed=6), True) if bias else None]
    return op_model("CONV_3D_TRANSPOSE", ins, [(out, "float32")], opts)


@pytest.mark.parametrize("padding,strides,out", [
    (SAME, (1, 1, 1), (4, 5, 3)),
    (SAME, (2, 2, 2), (8, 10, 6)),
    (SAME, (2, 2, 2), (7, 9, 5)),
    (SAME, (3, 1, 2), (12, 5, 6)),
    (VALID, (1, 1, 1), (5, 7, 5)),
    (VALID, (2, 2, 2), (8, 11, 7)),
    (VALID, (2, 3, 2), (9, 15, 8)),
])
def test_conv3d_transpose(padding: int, strides, out) -> None:
    m, feeds = conv3d_t([1, 4, 5, 3, 2], [2, 3, 3, 3, 2], out, options(padding, strides))
    check(m, feeds)


@pytest.mark.parametrize("act", [1, 3])
def test_conv3d_transpose_activation_batch(act: int) -> None:
    m, feeds = conv3d_t([2, 3, 3, 3, 3], [3, 2, 2, 4, 3], (6, 6, 6),
                        options(SAME, (2, 2, 2), act=act))
    check(m, feeds)


def test_conv3d_transpose_no_bias_computed_filter() -> None:
    m, feeds = conv3d_t([1, 3, 4, 2, 2], [2, 2, 2, 3, 2], (4, 5, 3), options(VALID),
                        bias=False, const_w=False)
    check(m, feeds)


def test_conv3d_transpose_dilation() -> None:
    m, feeds = conv3d_t([1, 3, 4, 3, 2], [2, 3, 2, 2, 2], (5, 8, 4),
                        options(VALID, dilations=(2, 2, 1)))
    check(m, feeds)


def test_conv3d_grouped_rejected() -> None:
    m, _ = conv3d([1, 4, 4, 4, 4], [2, 2, 2, 2, 3], options())
    with pytest.raises(ConversionFailed, match="grouped 3-D convolution"):
        convert_tflite(m)
