"""CUMSUM (exclusive, reverse) vs LiteRT."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import S, check, one_op, rand


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [1, -1])
def test_cumsum(exclusive: bool, reverse: bool, axis: int) -> None:
    o = S.CumsumOptionsT()
    o.exclusive, o.reverse = exclusive, reverse
    x = rand(2, 3, 4)
    check(one_op("CUMSUM", [x, np.array(axis, np.int32)], o, constants=[1]), [x])
