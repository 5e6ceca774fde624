"""ONNX ArgMax/ArgMin vs onnxruntime (int64 outputs)."""

from __future__ import annotations

import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("attrs", [{}, {"axis": 1, "keepdims": 0}, {"axis": -1}])
@pytest.mark.parametrize("opset", [11, 13])
def test_arg(op: str, attrs: dict[str, int], opset: int) -> None:
    check(op, {"x": rand(3, 4, 5)}, attrs, opset=opset)
