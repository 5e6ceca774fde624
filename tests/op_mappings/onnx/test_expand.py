"""ONNX Expand vs onnxruntime (bidirectional shapes)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("in_shape, shape", [((3, 1), [2, 3, 4]), ((2, 3), [1, 1]),
                                             ((1, 4), [3, 1])])
def test_expand(in_shape: tuple[int, ...], shape: list[int]) -> None:
    check("Expand", {"x": rand(*in_shape), "s": np.array(shape, np.int64)}, opset=13,
          constants=["s"])
