"""SCATTER_ND vs LiteRT: unique constant indices, duplicates (summed), computed indices."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import check, one_op, rand


@pytest.mark.parametrize("idx", [[[1], [3]], [[1], [1], [0]]])
def test_constant_indices(idx) -> None:
    i = np.array(idx, np.int32)
    upd = rand(len(idx), 3)
    check(one_op("SCATTER_ND", [i, upd, np.array([4, 3], np.int32)], constants=[0, 2],
                 out_dtype="float32"), [upd])


def test_input_indices_with_duplicates() -> None:
    i = np.array([[0, 1], [2, 0], [0, 1]], np.int32)
    upd = rand(3)
    check(one_op("SCATTER_ND", [i, upd, np.array([3, 2], np.int32)], constants=[2],
                 out_dtype="float32"), [i, upd])
