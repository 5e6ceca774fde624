"""ONNX Where vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("opset", [9, 16])
def test_where_broadcast(opset: int) -> None:
    cond = np.array([[True, False, True], [False, False, True]])
    check("Where", {"c": cond, "t": rand(3), "f": rand(2, 1, seed=1)}, opset=opset)


def test_where_int64_constant_condition() -> None:
    cond = np.array([True, False, True])
    t = np.array([1, 2, 3], np.int64)
    f = np.array([-1, -2, -3], np.int64)
    check("Where", {"c": cond, "t": t, "f": f}, opset=16, constants=["c"])
