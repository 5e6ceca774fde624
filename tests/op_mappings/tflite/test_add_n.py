"""ADD_N vs LiteRT."""

from __future__ import annotations

from tests.op_mappings.tflite.tflite_builder import check, one_op, rand


def test_add_n() -> None:
    xs = [rand(2, 3, seed=i) for i in range(3)]
    check(one_op("ADD_N", xs), xs)
