"""GATHER (axis, batch_dims), GATHER_ND, EMBEDDING_LOOKUP vs LiteRT."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import S, check, one_op, rand


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather(axis: int) -> None:
    o = S.GatherOptionsT()
    o.axis = axis
    x = rand(3, 4, 2)
    idx = np.array([[1, 0], [1, 1]], np.int32)
    check(one_op("GATHER", [x, idx], o, constants=[1]), [x])


def test_gather_indices_input() -> None:
    o = S.GatherOptionsT()
    x, idx = rand(4, 3), np.array([3, 0, 2], np.int32)
    check(one_op("GATHER", [x, idx], o), [x, idx])


def test_gather_batch_dims() -> None:
    o = S.GatherOptionsT()
    o.axis, o.batchDims = 1, 1
    x = rand(2, 4, 3)
    idx = np.array([[0, 3], [2, 2]], np.int32)
    check(one_op("GATHER", [x, idx], o, constants=[1], version=5), [x])


def test_gather_nd() -> None:
    x = rand(3, 4, 2)
    idx = np.array([[0, 1], [2, 3]], np.int32)
    check(one_op("GATHER_ND", [x, idx], constants=[1]), [x])


def test_embedding_lookup() -> None:
    ids = np.array([2, 0, 2], np.int32)
    table = rand(3, 4)
    check(one_op("EMBEDDING_LOOKUP", [ids, table], constants=[1], out_dtype="float32"), [ids])
