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


@pytest.mark.parametrize("op", ["SLICE", "STRIDED_SLICE"])
def test_empty_slice_dropped_by_concat(op: str) -> None:
    """An empty slice (as the lowered TensorListSetItem produces at index 0) becomes an empty
    constant that CONCATENATION drops."""
    from tests.op_mappings.tflite.tflite_builder import ModelBuilder

    mb = ModelBuilder()
    x = mb.input("x", [3, 4])
    e = mb.tensor("e", [0, 4])
    y = mb.output(mb.tensor("y", [3, 4]))
    if op == "SLICE":
        mb.op("SLICE", [x, mb.const("b", np.array([0, 0], np.int32)),
                        mb.const("s", np.array([0, -1], np.int32))], [e])
    else:
        mb.op("STRIDED_SLICE", [x, mb.const("b", np.array([2, 0], np.int32)),
                                mb.const("en", np.array([2, 4], np.int32)),
                                mb.const("st", np.array([1, 1], np.int32))], [e],
              S.StridedSliceOptionsT())
    o = S.ConcatenationOptionsT()
    o.axis = 0
    mb.op("CONCATENATION", [e, x], [y], o)
    result = check(mb.build(), [rand(3, 4)])
    assert result.report.to_dict()["ops"][op]["folded"] == ["e"]
