"""ONNX BatchNormalization vs onnxruntime."""

from __future__ import annotations

import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3), (1, 3, 7)])
@pytest.mark.parametrize("opset", [9, 15])
@pytest.mark.parametrize("epsilon", [None, 1e-3])
def test_batch_normalization(shape: tuple[int, ...], opset: int, epsilon: float | None) -> None:
    c = shape[1]
    inputs = {"x": rand(*shape), "scale": rand(c, seed=1), "bias": rand(c, seed=2),
              "mean": rand(c, seed=3), "var": rand(c, low=0.5, high=2.0, seed=4)}
    attrs = {} if epsilon is None else {"epsilon": epsilon}
    check("BatchNormalization", inputs, attrs, opset=opset,
          constants=["scale", "bias", "mean", "var"])
