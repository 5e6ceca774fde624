"""ONNX ArgMax/ArgMin vs onnxruntime (int64 outputs)."""

from __future__ import annotations

import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("attrs", [{}, {"axis": 1, "keepdims": 0}, {"axis": -1}])
@pytest.mark.parametrize("opset", [11, 13])
def test_arg(op: str, attrs: dict[str, int], opset: int) -> None:
    check(op, {"x": rand(3, 4, 5)}, attrs, opset=opset)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("attrs", [{"axis": 1}, {"axis": -1, "keepdims": 0}, {"axis": 0}])
def test_select_last_index(op: str, attrs: dict[str, int]) -> None:
    """Ties (values drawn from {0, 1, 2}) resolve to the last index."""
    import numpy as np

    x = np.random.default_rng(3).integers(0, 3, size=(3, 4, 5)).astype(np.float32)
    check(op, {"x": x}, {**attrs, "select_last_index": 1}, opset=13)
    check(op, {"x": x[:1]}, {"axis": 0, "select_last_index": 1}, opset=13)  # size-1 axis
