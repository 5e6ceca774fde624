"""SPLIT (axis first) and SPLIT_V (sizes with -1) vs LiteRT."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import ModelBuilder, S, check, rand


@pytest.mark.parametrize("axis,n", [(1, 3), (-1, 2), (0, 2)])
def test_split(axis: int, n: int) -> None:
    mb = ModelBuilder()
    a = mb.const("axis", np.array(axis, np.int32))
    x = mb.input("x", [4, 6, 2])
    outs = [mb.output(mb.tensor(f"y{i}", [1])) for i in range(n)]
    o = S.SplitOptionsT()
    o.numSplits = n
    mb.op("SPLIT", [a, x], outs, o)
    check(mb.build(), [rand(4, 6, 2)])


@pytest.mark.parametrize("sizes", [[1, 2, 3], [2, -1], [6]])
def test_split_v(sizes: list[int]) -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 6])
    s = mb.const("sizes", np.array(sizes, np.int32))
    a = mb.const("axis", np.array([1], np.int32))
    outs = [mb.output(mb.tensor(f"y{i}", [1])) for i in range(len(sizes))]
    o = S.SplitVOptionsT()
    o.numSplits = len(sizes)
    mb.op("SPLIT_V", [x, s, a], outs, o)
    check(mb.build(), [rand(2, 6)])
