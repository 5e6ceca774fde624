"""ONNX Det vs onnxruntime (orders 1-5, batched) and numpy's float64 determinant."""

from __future__ import annotations

import numpy as np
import pytest

import converter
from converter.core.errors import ConversionFailed
from tests.op_mappings.onnx.harness import check_node, make_model, rand


@pytest.mark.parametrize("shape", [(2, 2), (3, 3), (4, 3, 3), (2, 2, 4, 4), (5, 5), (3, 1, 1)])
def test_det(shape: tuple[int, ...]) -> None:
    x = rand(*shape, seed=sum(shape))
    check_node("Det", [("x", x)], opset=11, rtol=1e-4, atol=1e-4)
    got = converter.convert(make_model("Det", {"x": x}, opset=11)).run({"x": x})["y"]
    np.testing.assert_allclose(got, np.linalg.det(x.astype(np.float64)), rtol=1e-4,
                               atol=1e-4)


def test_det_too_large() -> None:
    with pytest.raises(ConversionFailed, match="at most"):
        converter.convert(make_model("Det", {"x": rand(7, 7)}, opset=11))
