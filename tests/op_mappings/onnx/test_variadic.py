"""ONNX Sum/Mean/Max/Min (variadic) vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("op", ["Sum", "Mean", "Max", "Min"])
@pytest.mark.parametrize("count", [1, 2, 3])
@pytest.mark.parametrize("opset", [8, 13])
def test_float(op: str, count: int, opset: int) -> None:
    shapes = [(2, 3), (3,), (1, 3)]
    inputs = {f"x{i}": rand(*shapes[i], seed=i) for i in range(count)}
    result = check(op, inputs, opset=opset)
    status = result.report.to_dict()["ops"][op]
    n_ops = count - 1 + (op == "Mean" and count > 1)
    assert status["decomposed" if n_ops > 1 else "native"]


@pytest.mark.parametrize("op", ["Max", "Min"])
def test_int32(op: str) -> None:
    check(op, {"a": np.array([1, -5, 3], np.int32), "b": np.array([2, -6, 3], np.int32)},
          opset=13)


def test_mean_three_inputs() -> None:
    check("Mean", {"a": rand(4, seed=3), "b": rand(4, seed=4), "c": rand(4, seed=5)}, opset=13)
