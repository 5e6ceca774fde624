"""BATCH_MATMUL vs LiteRT (adj_x / adj_y, broadcast batch dims)."""

from __future__ import annotations

import pytest

from tests.op_mappings.tflite.tflite_builder import S, check, one_op, rand


@pytest.mark.parametrize("adj_x,adj_y", [(False, False), (True, False), (False, True),
                                         (True, True)])
def test_batch_matmul(adj_x: bool, adj_y: bool) -> None:
    o = S.BatchMatMulOptionsT()
    o.adjX, o.adjY = adj_x, adj_y
    a = rand(2, 1, 4, 3) if adj_x else rand(2, 1, 3, 4)
    b = rand(3, 5, 4, seed=1) if adj_y else rand(3, 4, 5, seed=1)
    check(one_op("BATCH_MATMUL", [a, b], o, out_shape=[2, 3, 3, 5]), [a, b])
