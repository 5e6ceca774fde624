"""ONNX CumSum vs onnxruntime; CumProd (opset 26, not in onnxruntime) vs numpy.cumprod."""

from __future__ import annotations

import numpy as np
import pytest

import converter
from tests.op_mappings.onnx.harness import check_node, node_model, rand

X = rand(2, 3, 4, seed=1)


@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_cum_sum(exclusive: int, reverse: int, dtype: str) -> None:
    x = (X * 10).astype(dtype)
    check_node("CumSum", [("x", x), ("axis", np.array(-2, np.int32))],
               {"exclusive": exclusive, "reverse": reverse}, opset=14, constants=("axis",),
               rtol=1e-5)


@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("n", [1, 5, 8])
def test_cum_prod_numpy_oracle(exclusive: int, reverse: int, n: int) -> None:
    x = np.random.default_rng(n).integers(-3, 4, size=(2, n)).astype(np.int64)
    model = node_model("CumProd", [("x", x), ("axis", np.array(1, np.int64))],
                       {"exclusive": exclusive, "reverse": reverse}, opset=26,
                       constants=("axis",))
    got = converter.convert(model).run({"x": x})["y"]
    v = x[:, ::-1] if reverse else x
    if exclusive:
        v = np.concatenate([np.ones((2, 1), np.int64), v[:, :-1]], axis=1)
    ref = np.cumprod(v, axis=1)
    np.testing.assert_array_equal(got, ref[:, ::-1] if reverse else ref)
