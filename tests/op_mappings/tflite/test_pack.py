"""PACK / UNPACK vs LiteRT."""

from __future__ import annotations

import pytest

from tests.op_mappings.tflite.tflite_builder import S, check, one_op, rand


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_pack(axis: int) -> None:
    o = S.PackOptionsT()
    o.valuesCount, o.axis = 3, axis
    xs = [rand(2, 3, seed=i) for i in range(3)]
    check(one_op("PACK", xs, o), xs)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unpack(axis: int) -> None:
    x = rand(3, 2, 3)
    o = S.UnpackOptionsT()
    o.num, o.axis = 3 if axis != 1 else 2, axis
    shape = [d for i, d in enumerate(x.shape) if i != (axis % 3)]
    check(one_op("UNPACK", [x], o, n_outputs=o.num, out_shape=shape), [x])
