"""SHAPE, RANK, ZEROS_LIKE, FILL, RANGE, BROADCAST_ARGS vs LiteRT (all fold to
constants)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import ModelBuilder, S, check, one_op, rand


@pytest.mark.parametrize("out", ["int32", "int64"])
def test_shape(out: str) -> None:
    o = S.ShapeOptionsT()
    o.outType = 2 if out == "int32" else 4
    x = rand(2, 3, 4)
    res = check(one_op("SHAPE", [x], o, out_dtype=out, out_shape=[3]), [x])
    assert res.report.to_dict()["ops"]["SHAPE"]["folded"] == ["y0"]


def test_rank() -> None:
    x = rand(2, 3)
    check(one_op("RANK", [x], out_dtype="int32", out_shape=[]), [x])


def test_zeros_like() -> None:
    x = rand(2, 3)
    check(one_op("ZEROS_LIKE", [x]), [x])


def test_fill_input_value() -> None:
    v = np.array(2.5, np.float32)
    check(one_op("FILL", [np.array([2, 3], np.int32), v], constants=[0], out_dtype="float32",
                 out_shape=[2, 3]), [v])


def test_range_and_broadcast_args() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 5])
    r = mb.tensor("r", [5])
    mb.op("RANGE", [mb.const("a", np.array(1.0, np.float32)),
                    mb.const("b", np.array(3.5, np.float32)),
                    mb.const("d", np.array(0.5, np.float32))], [r])
    y = mb.output(mb.tensor("y", [2, 5]))
    mb.op("ADD", [x, r], [y], S.AddOptionsT())
    s = mb.output(mb.tensor("s", [2], "int32"))
    mb.op("BROADCAST_ARGS", [mb.const("s1", np.array([2, 1], np.int32)),
                             mb.const("s2", np.array([5], np.int32))], [s])
    check(mb.build(), [rand(2, 5)])
