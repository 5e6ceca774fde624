"""SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND vs LiteRT (paddings and crops)."""

from __future__ import annotations

import numpy as np

from tests.op_mappings.tflite.tflite_builder import check, one_op, rand


def test_space_to_batch() -> None:
    x = rand(1, 4, 3, 2)
    pads = np.array([[0, 0], [1, 0]], np.int32)
    check(one_op("SPACE_TO_BATCH_ND", [x, np.array([2, 2], np.int32), pads],
                 constants=[1, 2]), [x])


def test_batch_to_space() -> None:
    x = rand(4, 2, 3, 2)
    crops = np.array([[0, 1], [1, 1]], np.int32)
    check(one_op("BATCH_TO_SPACE_ND", [x, np.array([2, 2], np.int32), crops],
                 constants=[1, 2]), [x])
