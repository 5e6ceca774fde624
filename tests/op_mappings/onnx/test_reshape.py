"""ONNX Reshape vs onnxruntime (0 copies, -1 inferred, allowzero, folding)."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.errors import ConversionFailed
from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("shape", [[6, 4], [0, -1], [-1], [2, 0, 2, 2], [1, 24, 1]])
@pytest.mark.parametrize("opset", [5, 14])
def test_reshape(shape: list[int], opset: int) -> None:
    check("Reshape", {"x": rand(2, 3, 4), "s": np.array(shape, np.int64)}, opset=opset,
          constants=["s"])


def test_reshape_folds_constant_data() -> None:
    result = check("Reshape", {"x": np.arange(6, dtype=np.int64), "s": np.array([3, 2])},
                   opset=14, constants=["x", "s"])
    assert result.report.to_dict()["ops"]["Reshape"]["folded"]


def test_reshape_shape_must_be_constant() -> None:
    with pytest.raises(ConversionFailed, match="requires_constant_input"):
        check("Reshape", {"x": rand(2, 3), "s": np.array([3, 2], np.int64)}, opset=14)
