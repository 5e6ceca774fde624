"""TILE and BROADCAST_TO vs LiteRT."""

from __future__ import annotations

import numpy as np

from tests.op_mappings.tflite.tflite_builder import check, one_op, rand


def test_tile() -> None:
    x = rand(2, 3)
    check(one_op("TILE", [x, np.array([2, 3], np.int32)], constants=[1]), [x])


def test_broadcast_to() -> None:
    x = rand(3, 1)
    check(one_op("BROADCAST_TO", [x, np.array([2, 3, 4], np.int32)], constants=[1],
                 version=2), [x])
