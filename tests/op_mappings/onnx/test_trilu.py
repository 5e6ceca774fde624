"""ONNX Trilu vs onnxruntime (upper/lower, constant k)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check_node, rand

X = rand(2, 3, 4, seed=1)


@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [None, -1, 0, 2])
def test_trilu(upper: int, k: int | None) -> None:
    kk = None if k is None else np.array(k, np.int64)
    check_node("Trilu", [("x", X), ("k", kk)], {"upper": upper}, opset=14, constants=("k",))
