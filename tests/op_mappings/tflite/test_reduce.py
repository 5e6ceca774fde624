"""MEAN, SUM, REDUCE_MAX/MIN/PROD/ANY/ALL vs LiteRT (negative/repeated axes, keep_dims)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import Quant, S, check, one_op, rand


def _opts(keep: bool) -> S.ReducerOptionsT:
    o = S.ReducerOptionsT()
    o.keepDims = keep
    return o


@pytest.mark.parametrize("op", ["MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD"])
@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("axes", [[1], [-1, 0], [2, -1]])
def test_float(op: str, keep: bool, axes: list[int]) -> None:
    x = rand(2, 3, 4, low=0.5, high=1.5)
    check(one_op(op, [x, np.array(axes, np.int32)], _opts(keep), constants=[1]), [x])


@pytest.mark.parametrize("op", ["REDUCE_ANY", "REDUCE_ALL"])
def test_bool(op: str) -> None:
    x = np.array([[True, False, True], [True, True, True]])
    check(one_op(op, [x, np.array([1], np.int32)], _opts(False), constants=[1]), [x])


def test_int32_sum() -> None:
    x = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
    check(one_op("SUM", [x, np.array([0], np.int32)], _opts(True), constants=[1]), [x])


@pytest.mark.parametrize("op", ["MEAN", "REDUCE_MAX"])
def test_int8(op: str) -> None:
    x = rand(1, 4, 4, 3, low=-128, high=127, dtype="int8")
    q = Quant([0.05], [2])
    m = one_op(op, [x, np.array([1, 2], np.int32)], _opts(True), constants=[1],
               quant_in=[q], quant_out=q, version=2)
    check(m, [x], steps=1)
