"""DYNAMIC_UPDATE_SLICE vs LiteRT (in range and clamped start)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import check, one_op, rand


@pytest.mark.parametrize("start", [[1, 1], [2, 5]])
def test_update(start: list[int]) -> None:
    x, u = rand(4, 5), rand(2, 3, seed=1)
    check(one_op("DYNAMIC_UPDATE_SLICE", [x, u, np.array(start, np.int32)], constants=[2]),
          [x, u])
