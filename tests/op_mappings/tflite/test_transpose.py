"""TRANSPOSE vs LiteRT."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import Quant, check, one_op, rand


@pytest.mark.parametrize("perm", [[1, 0, 2], [2, 0, 1], [0, 1, 2]])
def test_transpose(perm: list[int]) -> None:
    x = rand(2, 3, 4)
    check(one_op("TRANSPOSE", [x, np.array(perm, np.int32)], constants=[1]), [x])


def test_int8() -> None:
    x = rand(2, 3, low=-128, high=127, dtype="int8")
    q = Quant([0.1], [0])
    check(one_op("TRANSPOSE", [x, np.array([1, 0], np.int32)], constants=[1], quant_in=[q],
                 quant_out=q), [x], steps=0)
