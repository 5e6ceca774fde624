"""RESHAPE (shape input, new_shape option, -1), SQUEEZE, EXPAND_DIMS vs LiteRT."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import ModelBuilder, Quant, S, check, one_op, rand


@pytest.mark.parametrize("shape", [[4, 6], [-1, 3], [2, 2, -1]])
def test_shape_input(shape: list[int]) -> None:
    x = rand(2, 3, 4)
    check(one_op("RESHAPE", [x, np.array(shape, np.int32)], constants=[1]), [x])


def test_new_shape_option() -> None:
    o = S.ReshapeOptionsT()
    o.newShape = [3, 8]
    x = rand(2, 3, 4)
    check(one_op("RESHAPE", [x], o, out_shape=[3, 8]), [x])


def test_int8_raw() -> None:
    x = rand(2, 6, low=-128, high=127, dtype="int8")
    q = Quant([0.1], [2])
    res = check(one_op("RESHAPE", [x, np.array([3, 4], np.int32)], constants=[1],
                       quant_in=[q], quant_out=q), [x], steps=0)
    assert res.report.to_dict()["ops"]["RESHAPE"]["webnn_ops"] == ["reshape"]


def test_folded_constant() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 3])
    c = mb.const("c", rand(3, 2, seed=1))
    shape = mb.const("s", np.array([2, 3], np.int32))
    r = mb.tensor("r", [2, 3])
    y = mb.output(mb.tensor("y", [2, 3]))
    mb.op("RESHAPE", [c, shape], [r])
    mb.op("ADD", [x, r], [y], S.AddOptionsT())
    res = check(mb.build(), [rand(2, 3)])
    assert res.report.to_dict()["ops"]["RESHAPE"]["folded"] == ["r"]


@pytest.mark.parametrize("dims", [[], [2], [-1, 0]])
def test_squeeze(dims: list[int]) -> None:
    o = S.SqueezeOptionsT()
    o.squeezeDims = dims
    x = rand(1, 3, 1, 1)
    check(one_op("SQUEEZE", [x], o), [x])


@pytest.mark.parametrize("axis", [0, 2, -1, -3])
def test_expand_dims(axis: int) -> None:
    x = rand(2, 3)
    check(one_op("EXPAND_DIMS", [x, np.array([axis], np.int32)], constants=[1]), [x])
