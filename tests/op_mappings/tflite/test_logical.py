"""LOGICAL_AND / OR / NOT vs LiteRT."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import check, one_op


@pytest.mark.parametrize("op", ["LOGICAL_AND", "LOGICAL_OR"])
def test_binary(op: str) -> None:
    a = np.array([[True, False], [True, True]])
    b = np.array([False, True])
    check(one_op(op, [a, b]), [a, b])


def test_not() -> None:
    a = np.array([True, False, True])
    check(one_op("LOGICAL_NOT", [a]), [a])
