"""ONNX TensorScatter (opset 24) vs onnxruntime: linear and circular modes, with and without
write_indices, sequence axis in the middle or last-but-one."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check_node, rand


@pytest.mark.parametrize("mode", ["linear", "circular"])
@pytest.mark.parametrize("with_indices", [True, False])
@pytest.mark.parametrize("axis", [-2, 1])
def test_tensor_scatter(mode: str, with_indices: bool, axis: int) -> None:
    past = rand(3, 6, 2, 4, seed=1) if axis == 1 else rand(3, 2, 6, 4, seed=1)
    upd_shape = list(past.shape)
    upd_shape[axis] = 3
    upd = rand(*upd_shape, seed=2)
    write = np.array([0, 2, 3] if mode == "linear" else [4, 5, 1], np.int64)
    items = [("past", past), ("upd", upd), ("w", write if with_indices else None)]
    check_node("TensorScatter", items, {"mode": mode, "axis": axis}, opset=24)
