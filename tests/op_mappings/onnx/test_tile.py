"""ONNX Tile vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("reps", [[1, 1], [2, 3], [3, 1]])
def test_tile(reps: list[int]) -> None:
    check("Tile", {"x": rand(2, 3), "r": np.array(reps, np.int64)}, opset=13, constants=["r"])
