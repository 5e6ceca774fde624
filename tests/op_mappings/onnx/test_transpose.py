"""ONNX Transpose vs onnxruntime."""

from __future__ import annotations

import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("perm", [None, [0, 2, 1], [2, 0, 1]])
def test_transpose(perm: list[int] | None) -> None:
    attrs = {} if perm is None else {"perm": perm}
    check("Transpose", {"x": rand(2, 3, 4)}, attrs, opset=13)


def test_transpose_folded() -> None:
    result = check("Transpose", {"x": rand(2, 3)}, opset=13, constants=["x"])
    assert result.report.to_dict()["ops"]["Transpose"]["folded"]
