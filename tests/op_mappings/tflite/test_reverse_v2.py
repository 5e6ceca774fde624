"""REVERSE_V2 vs LiteRT."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import check, one_op, rand


@pytest.mark.parametrize("axes", [[0], [-1], [1]])
def test_reverse(axes: list[int]) -> None:
    x = rand(2, 3, 4)
    check(one_op("REVERSE_V2", [x, np.array(axes, np.int32)], constants=[1], version=2), [x])
