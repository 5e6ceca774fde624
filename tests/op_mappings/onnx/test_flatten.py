"""ONNX Flatten vs onnxruntime."""

from __future__ import annotations

import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1])
def test_flatten(axis: int) -> None:
    check("Flatten", {"x": rand(2, 3, 4)}, {"axis": axis}, opset=13)


def test_flatten_default() -> None:
    check("Flatten", {"x": rand(2, 3, 4)}, opset=9)
