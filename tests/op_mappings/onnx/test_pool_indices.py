"""ONNX MaxPool's Indices output vs onnxruntime: 1-D, 2-D and 3-D, pads, strides,
dilations, ceil_mode, auto_pad, storage_order 0 and 1, ties (the first maximum wins),
negative inputs next to the padding, float16."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check_node, rand

OUT = ("y", "i")


def _ties(*shape: int, seed: int = 0) -> np.ndarray:
    """Small integers (many ties inside a window), all negative: padding must never win."""
    rng = np.random.default_rng(seed)
    return -rng.integers(1, 4, size=shape).astype(np.float32)


CASES_2D: list[tuple[str, dict[str, Any]]] = [
    ("plain", {"kernel_shape": [2, 2]}),
    ("strides", {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ("pads", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    ("asym_pads", {"kernel_shape": [3, 2], "pads": [2, 0, 1, 1], "strides": [2, 1]}),
    ("dilations", {"kernel_shape": [2, 3], "dilations": [2, 2], "pads": [1, 2, 0, 1]}),
    ("ceil", {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    ("same_upper", {"kernel_shape": [3, 2], "auto_pad": "SAME_UPPER", "strides": [2, 1]}),
    ("same_lower", {"kernel_shape": [2, 3], "auto_pad": "SAME_LOWER"}),
]


@pytest.mark.parametrize("storage_order", [0, 1])
@pytest.mark.parametrize("name,attrs", CASES_2D, ids=[c[0] for c in CASES_2D])
def test_maxpool_indices_2d(name: str, attrs: dict[str, Any], storage_order: int) -> None:
    x = rand(2, 3, 7, 6, seed=1)
    check_node("MaxPool", [("x", x)], {**attrs, "storage_order": storage_order}, opset=12,
               outputs=OUT)


@pytest.mark.parametrize("storage_order", [0, 1])
def test_maxpool_indices_ties_and_padding(storage_order: int) -> None:
    x = _ties(1, 2, 5, 5, seed=2)
    check_node("MaxPool", [("x", x)], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1],
                                       "storage_order": storage_order}, opset=12, outputs=OUT)


@pytest.mark.parametrize("attrs", [{"kernel_shape": [3]},
                                   {"kernel_shape": [2], "strides": [2], "pads": [1, 1]},
                                   {"kernel_shape": [2], "dilations": [3], "ceil_mode": 1,
                                    "strides": [2]}], ids=str)
def test_maxpool_indices_1d(attrs: dict[str, Any]) -> None:
    check_node("MaxPool", [("x", _ties(2, 2, 9, seed=3))], attrs, opset=12, outputs=OUT)


@pytest.mark.parametrize("storage_order", [0, 1])
@pytest.mark.parametrize("attrs", [{"kernel_shape": [2, 2, 2]},
                                   {"kernel_shape": [2, 3, 2], "strides": [1, 2, 2],
                                    "pads": [1, 0, 1, 0, 1, 0]}], ids=str)
def test_maxpool_indices_3d(attrs: dict[str, Any], storage_order: int) -> None:
    x = rand(1, 2, 4, 5, 3, seed=4)
    check_node("MaxPool", [("x", x)], {**attrs, "storage_order": storage_order}, opset=12,
               outputs=OUT)


def test_maxpool_indices_float16_and_unused_indices() -> None:
    x = rand(1, 2, 6, 6, seed=5).astype(np.float16)
    check_node("MaxPool", [("x", x)], {"kernel_shape": [3, 3], "strides": [2, 2],
                                       "pads": [1, 1, 1, 1]}, opset=12, outputs=OUT)
    # storage_order without an Indices output only changes nothing
    check_node("MaxPool", [("x", rand(1, 1, 4, 4, seed=6))],
               {"kernel_shape": [2, 2], "storage_order": 1}, opset=12)
