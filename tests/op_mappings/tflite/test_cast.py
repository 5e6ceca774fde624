"""CAST vs LiteRT (float<->int truncation, to and from bool)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import check, one_op

CASES = [("float32", "int32"), ("int32", "float32"), ("float32", "bool"), ("bool", "float32"),
         ("int32", "int64"), ("uint8", "float32")]


@pytest.mark.parametrize("src,dst", CASES)
def test_cast(src: str, dst: str) -> None:
    x = np.array([[0, 1.7, -2.6], [3.2, 0, -0.4]]).astype(src)
    check(one_op("CAST", [x], out_dtype=dst), [x])
