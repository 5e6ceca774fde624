"""ONNX Squeeze vs onnxruntime (attribute and input forms)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("axes", [None, [0], [2, -1]])
def test_squeeze11(axes: list[int] | None) -> None:
    attrs = {} if axes is None else {"axes": axes}
    check("Squeeze", {"x": rand(1, 3, 1, 1)}, attrs, opset=11)


@pytest.mark.parametrize("axes", [None, [0], [2, -1]])
def test_squeeze13(axes: list[int] | None) -> None:
    inputs = {"x": rand(1, 3, 1, 1)}
    if axes is not None:
        inputs["axes"] = np.array(axes, np.int64)
    check("Squeeze", inputs, opset=13, constants=["axes"])
