"""RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR vs LiteRT in every align_corners /
half_pixel_centers mode, up- and down-scaling, fractional ratios."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import Quant, S, check, one_op, rand

MODES = [(False, False), (True, False), (False, True)]
SIZES = [((4, 5), (8, 10)), ((6, 6), (3, 4)), ((4, 3), (7, 5)), ((3, 3), (1, 1))]


@pytest.mark.parametrize("align,half", MODES)
@pytest.mark.parametrize("src,dst", SIZES)
def test_bilinear(align: bool, half: bool, src, dst) -> None:
    o = S.ResizeBilinearOptionsT()
    o.alignCorners, o.halfPixelCenters = align, half
    x = rand(1, *src, 2)
    check(one_op("RESIZE_BILINEAR", [x, np.array(dst, np.int32)], o, constants=[1],
                 version=3), [x])


@pytest.mark.parametrize("align,half", MODES)
@pytest.mark.parametrize("src,dst", SIZES + [((6, 6), (3, 3))])
def test_nearest(align: bool, half: bool, src, dst) -> None:
    o = S.ResizeNearestNeighborOptionsT()
    o.alignCorners, o.halfPixelCenters = align, half
    x = rand(1, *src, 2)
    check(one_op("RESIZE_NEAREST_NEIGHBOR", [x, np.array(dst, np.int32)], o, constants=[1],
                 version=3), [x])


def test_nearest_int8() -> None:
    o = S.ResizeNearestNeighborOptionsT()
    x = rand(1, 3, 3, 2, low=-128, high=127, dtype="int8")
    q = Quant([0.1], [0])
    check(one_op("RESIZE_NEAREST_NEIGHBOR", [x, np.array([5, 7], np.int32)], o, constants=[1],
                 quant_in=[q], quant_out=q, version=2), [x], steps=0)


@pytest.mark.parametrize("align,half", MODES)
def test_bilinear_int8(align: bool, half: bool) -> None:
    o = S.ResizeBilinearOptionsT()
    o.alignCorners, o.halfPixelCenters = align, half
    x = rand(1, 4, 5, 2, low=-128, high=127, dtype="int8")
    q = Quant([0.1], [-4])
    check(one_op("RESIZE_BILINEAR", [x, np.array([7, 3], np.int32)], o, constants=[1],
                 quant_in=[q], quant_out=q, out_shape=[1, 7, 3, 2], version=2), [x], steps=1)
