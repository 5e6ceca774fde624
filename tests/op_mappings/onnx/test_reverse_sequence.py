"""ONNX ReverseSequence (constant lengths, both axis orders) vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check_node, rand


@pytest.mark.parametrize("axes", [(0, 1), (1, 0)])
def test_reverse_sequence(axes: tuple[int, int]) -> None:
    t_axis, b_axis = axes
    x = rand(4, 3, 2, seed=6) if t_axis == 0 else rand(3, 4, 2, seed=6)
    lens = np.array([4, 1, 3], np.int64)
    check_node("ReverseSequence", [("x", x), ("lens", lens)],
               {"time_axis": t_axis, "batch_axis": b_axis}, opset=10, constants=("lens",))
