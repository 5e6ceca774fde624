"""Torch pools vs the reference backend: l2Pool2d (no WPT file), averagePool2d with dilations,
and maxPool2d on every data type, with asymmetric padding, ceil rounding, output sizes, both
layouts, global windows and windows that hold only padding, and symmetric padding that runs
as torch's implicit padding."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")

from converter.core.webnn import MLGraphBuilder, MLOperand  # noqa: E402
from tests.converter.runtimes.torch.common import compare, rand  # noqa: E402

Ops = dict[str, MLOperand]

VARIANTS: list[dict[str, Any]] = [
    {"window_dimensions": [3, 3]},
    {"window_dimensions": [2, 3], "strides": [2, 1], "padding": [1, 0, 2, 1]},
    {"window_dimensions": [3, 2], "dilations": [2, 1], "padding": [2, 2, 0, 1]},
    {"window_dimensions": [2, 2], "strides": [2, 2], "output_shape_rounding": "ceil"},
    {"window_dimensions": [3, 3], "strides": [3, 3], "padding": [0, 2, 0, 2],
     "output_shape_rounding": "ceil"},
    {"window_dimensions": [2, 2], "strides": [2, 2], "output_sizes": [4, 4], "padding": [1, 1, 1, 1]},
    {},  # global pooling
    {"window_dimensions": [2, 2], "padding": [3, 0, 0, 0]},  # rows of padding only
    {"window_dimensions": [3, 3], "dilations": [2, 2], "strides": [1, 2], "layout": "nhwc"},
    # symmetric padding that torch's implicit padding reproduces (with and without ceil_mode)
    {"window_dimensions": [3, 3], "strides": [2, 2], "padding": [1, 1, 1, 1]},
    {"window_dimensions": [3, 3], "strides": [2, 2], "padding": [1, 1, 1, 1],
     "output_shape_rounding": "ceil"},
    {"window_dimensions": [3, 3], "strides": [2, 2], "padding": [1, 0, 1, 1],
     "dilations": [1, 2]},
]


def _input(variant: dict[str, Any], dtype: str) -> np.ndarray:
    shape = (2, 7, 6, 3) if variant.get("layout") == "nhwc" else (2, 3, 7, 6)
    if np.dtype(dtype).kind == "f":
        return rand(shape, dtype, -4, 4)
    info = np.iinfo(dtype)
    x = rand(shape, dtype, max(int(info.min), -100), min(int(info.max), 100))
    x.reshape(-1)[:2] = [info.min, info.max]
    return x


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("variant", range(len(VARIANTS)))
@pytest.mark.parametrize("op", ["l2_pool2d", "average_pool2d", "max_pool2d"])
def test_float_pools(op: str, variant: int, dtype: str) -> None:
    opts = VARIANTS[variant]

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        return {"y": getattr(b, op)(o["x"], **opts)}

    compare({"x": _input(opts, dtype)}, build, f16_ulp=2)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint32", "int64", "uint64"])
@pytest.mark.parametrize("variant", [1, 2, 4, 7, 8])
def test_integer_max_pool(variant: int, dtype: str) -> None:
    opts = VARIANTS[variant]
    x = _input(opts, dtype)
    if dtype == "uint64":
        x.reshape(-1)[2:6] = 2**63 + np.arange(4, dtype=np.uint64)

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        return {"y": b.max_pool2d(o["x"], **opts)}

    compare({"x": x}, build)
