"""SELECT (rank-1 condition) and SELECT_V2 (broadcast) vs LiteRT."""

from __future__ import annotations

import numpy as np

from tests.op_mappings.tflite.tflite_builder import check, one_op, rand


def test_select_v2_broadcast() -> None:
    c = np.array([True, False, True])
    a, b = rand(2, 3), rand(1, 3, seed=1)
    check(one_op("SELECT_V2", [c, a, b], out_dtype="float32"), [c, a, b])


def test_select_rows() -> None:
    c = np.array([True, False])
    a, b = rand(2, 3), rand(2, 3, seed=1)
    check(one_op("SELECT", [c, a, b], out_dtype="float32"), [c, a, b])


def test_select_same_shape() -> None:
    c = np.array([[True, False, False], [False, True, True]])
    a, b = rand(2, 3), rand(2, 3, seed=1)
    check(one_op("SELECT", [c, a, b], out_dtype="float32"), [c, a, b])
