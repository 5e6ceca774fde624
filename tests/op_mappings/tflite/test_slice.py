"""SLICE and STRIDED_SLICE (masks, offset, negative strides) vs LiteRT."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import S, check, one_op, rand


@pytest.mark.parametrize("begin,size", [([0, 1, 0], [2, 2, -1]), ([1, 0, 2], [1, -1, 2])])
def test_slice(begin: list[int], size: list[int]) -> None:
    x = rand(2, 3, 4)
    out = [d - b if s == -1 else s for b, s, d in zip(begin, size, x.shape, strict=True)]
    check(one_op("SLICE", [x, np.array(begin, np.int32), np.array(size, np.int32)],
                 constants=[1, 2], out_shape=out), [x])


CASES = [
    # begin, end, strides, begin_mask, end_mask, ellipsis, new_axis, shrink, offset
    ([0, 1, 0], [2, 3, 4], [1, 1, 2], 0, 0, 0, 0, 0, False),
    ([1, -1, 3], [0, 0, 0], [-1, -1, -2], 0, 0, 0, 0, 0, False),
    ([0, 0, 0], [0, 2, 0], [1, 1, 1], 5, 5, 0, 0, 0, False),
    ([0, 1], [0, 2], [1, 1], 0, 0, 1, 0, 2, False),
    ([0, 0, 1], [0, 0, 3], [1, 1, 1], 0, 0, 0, 2, 1, False),
    ([0, 1, 1], [2, 1, 2], [1, 1, 1], 0, 0, 0, 0, 0, True),
    ([-1, 0, 0], [-3, 3, 4], [-1, 2, 3], 0, 0, 0, 0, 0, False),
    ([1, 0], [2, 0], [1, 1], 0, 2, 0, 0, 1, False),
]


@pytest.mark.parametrize("case", CASES)
def test_strided_slice(case) -> None:
    begin, end, strides, bm, em, el, na, sh, offset = case
    o = S.StridedSliceOptionsT()
    o.beginMask, o.endMask, o.ellipsisMask, o.newAxisMask, o.shrinkAxisMask = bm, em, el, na, sh
    o.offset = offset
    x = rand(2, 3, 4)
    m = one_op("STRIDED_SLICE", [x, np.array(begin, np.int32), np.array(end, np.int32),
                                 np.array(strides, np.int32)], o, constants=[1, 2, 3],
               version=4 if offset else 2)
    check(m, [x])
