"""Torch resample2d vs the reference backend (no WPT file): both modes, up/down scales and
sizes, other axes, float32/float16 and the exact uint8/int8 linear path."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")

from converter.core.webnn import MLGraphBuilder, MLOperand  # noqa: E402
from tests.converter.runtimes.torch.common import compare, rand  # noqa: E402

Ops = dict[str, MLOperand]

VARIANTS: list[dict[str, Any]] = [
    {"scales": [2.0, 2.0]},
    {"scales": [0.5, 1.5]},
    {"sizes": [7, 3]},
    {"sizes": [1, 11]},
    {"sizes": [5, 13], "axes": [1, 2]},
    {"scales": [1.0, 1.0]},
    {"scales": [3.0, 0.34], "axes": [0, 3]},
]


@pytest.mark.parametrize("dtype", ["float32", "float16", "uint8", "int8"])
@pytest.mark.parametrize("mode", ["nearest-neighbor", "linear"])
@pytest.mark.parametrize("variant", range(len(VARIANTS)))
def test_resample2d(variant: int, mode: str, dtype: str) -> None:
    opts = VARIANTS[variant]
    if np.dtype(dtype).kind == "f":
        x = rand((2, 3, 4, 6), dtype, -5, 5)
    else:
        info = np.iinfo(dtype)
        x = rand((2, 3, 4, 6), dtype, int(info.min), int(info.max))

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        return {"y": b.resample2d(o["x"], mode=mode, **opts)}

    compare({"x": x}, build, f16_ulp=2)
