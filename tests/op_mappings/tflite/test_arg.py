"""ARG_MAX / ARG_MIN vs LiteRT (int32 and int64 outputs, int8 input)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import S, check, one_op, rand


@pytest.mark.parametrize("op", ["ARG_MAX", "ARG_MIN"])
@pytest.mark.parametrize("out", ["int32", "int64"])
@pytest.mark.parametrize("axis", [1, -1])
def test_arg(op: str, out: str, axis: int) -> None:
    o = S.ArgMaxOptionsT() if op == "ARG_MAX" else S.ArgMinOptionsT()
    o.outputType = 2 if out == "int32" else 4
    x = rand(2, 3, 5)
    check(one_op(op, [x, np.array([axis], np.int32)], o, constants=[1], out_dtype=out), [x])


def test_int8_input() -> None:
    o = S.ArgMaxOptionsT()
    o.outputType = 2
    x = rand(3, 6, low=-128, high=127, dtype="int8")
    check(one_op("ARG_MAX", [x, np.array([1], np.int32)], o, constants=[1], out_dtype="int32"),
          [x])
