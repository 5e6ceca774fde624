"""ONE_HOT vs LiteRT (axis -1 and 0, out-of-range index)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import S, check, one_op


@pytest.mark.parametrize("axis", [-1, 0])
def test_one_hot(axis: int) -> None:
    o = S.OneHotOptionsT()
    o.axis = axis
    idx = np.array([[0, 2], [3, 1]], np.int32)
    ins = [idx, np.array(3, np.int32), np.array(5.0, np.float32), np.array(-1.0, np.float32)]
    check(one_op("ONE_HOT", ins, o, constants=[1, 2, 3], out_dtype="float32"), [idx])
