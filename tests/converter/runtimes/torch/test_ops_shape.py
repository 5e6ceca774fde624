"""Torch data-movement ops vs the reference backend on the paths WPT covers less: pad modes
on integer types (uint64 fill above 2**63), wide reflections, strided slices, tile, expand,
split, triangular and reverse on every data type."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from converter.core.webnn import MLGraphBuilder, MLOperand  # noqa: E402
from tests.converter.runtimes.torch.common import compare, rand  # noqa: E402

Ops = dict[str, MLOperand]

TYPES = ["float32", "float16", "int8", "uint8", "int32", "uint32", "int64", "uint64"]


def _data(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    return rand(shape, dtype, 0, 100) if np.dtype(dtype).kind != "f" else rand(shape, dtype)


@pytest.mark.parametrize("dtype", TYPES)
def test_pad_modes(dtype: str) -> None:
    x = _data(dtype, (3, 4))
    fill = 2**63 + 5 if dtype == "uint64" else 7

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        return {"c": b.pad(o["x"], [1, 2], [0, 3], value=fill),
                "e": b.pad(o["x"], [2, 0], [1, 5], mode="edge"),
                "r": b.pad(o["x"], [2, 3], [2, 3], mode="reflection"),
                "none": b.pad(o["x"], [0, 0], [0, 0], mode="reflection")}

    compare({"x": x}, build)


@pytest.mark.parametrize("dtype", TYPES)
def test_movement_ops(dtype: str) -> None:
    x = _data(dtype, (2, 3, 4))

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        x = o["x"]
        parts = b.split(x, [1, 3], axis=2)
        return {"slice": b.slice(x, [0, 1, 0], [2, 2, 4], strides=[1, 2, 3]),
                "tile": b.tile(x, [2, 1, 3]), "expand": b.expand(b.slice(x, [0, 0, 0], [1, 3, 1]),
                                                                [2, 2, 3, 5]),
                "split0": parts[0], "split1": parts[1], "equal": b.split(x, 3, axis=1)[2],
                "tri_u": b.triangular(x, upper=True, diagonal=1),
                "tri_l": b.triangular(x, upper=False, diagonal=-1),
                "rev": b.reverse(x, axes=[0, 2]), "rev_all": b.reverse(x),
                "perm": b.transpose(x, permutation=[2, 0, 1]),
                "concat": b.concat([x, b.reverse(x, axes=[1])], 1),
                "where": b.where(b.constant(np.array([1, 0, 1, 0], np.uint8)), x,
                                 b.reverse(x, axes=[2]))}

    compare({"x": x}, build)
