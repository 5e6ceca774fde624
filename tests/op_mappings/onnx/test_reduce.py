"""ONNX Reduce* vs onnxruntime (attribute and input axes, keepdims, noop_with_empty_axes)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, rand

OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
       "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axes, keepdims", [(None, 1), ([1], 0), ([0, -1], 1)])
def test_attribute_axes(op: str, axes: list[int] | None, keepdims: int) -> None:
    attrs = {"keepdims": keepdims}
    if axes is not None:
        attrs["axes"] = axes
    opset = 11 if op == "ReduceSum" else 13
    check(op, {"x": rand(2, 3, 4, low=0.5, high=2.0)}, attrs, opset=opset, rtol=1e-5)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axes, keepdims, noop", [(None, 1, 0), ([1], 0, 0), ([], 1, 1)])
def test_input_axes(op: str, axes: list[int] | None, keepdims: int, noop: int) -> None:
    inputs = {"x": rand(2, 3, 4, low=0.5, high=2.0)}
    if axes is not None:
        inputs["axes"] = np.array(axes, np.int64)
    check(op, inputs, {"keepdims": keepdims, "noop_with_empty_axes": noop}, opset=18,
          constants=["axes"])


def test_reduce_sum_13_int32() -> None:
    check("ReduceSum", {"x": np.arange(12, dtype=np.int32).reshape(3, 4),
                        "axes": np.array([1], np.int64)}, {"keepdims": 0}, opset=13,
          constants=["axes"])
