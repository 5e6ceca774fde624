"""ONNX Unsqueeze vs onnxruntime (attribute and input forms; axes vs output rank)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("axes", [[0], [-1], [1, 3], [0, -1]])
def test_unsqueeze11(axes: list[int]) -> None:
    check("Unsqueeze", {"x": rand(3, 4)}, {"axes": axes}, opset=11)


@pytest.mark.parametrize("axes", [[0], [-1], [1, 3]])
def test_unsqueeze13(axes: list[int]) -> None:
    check("Unsqueeze", {"x": rand(3, 4), "axes": np.array(axes, np.int64)}, opset=13,
          constants=["axes"])


def test_unsqueeze_scalar() -> None:
    check("Unsqueeze", {"x": np.array(2.5, np.float32), "axes": np.array([0], np.int64)},
          opset=13, constants=["axes"])
