"""Torch gather / scatter ops vs the reference backend: every index type, negative and
out-of-range (clamped) indices, duplicate scatter targets (the last update wins), uint64."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from converter.core.webnn import MLGraphBuilder, MLOperand  # noqa: E402
from tests.converter.runtimes.torch.common import compare, rand  # noqa: E402

Ops = dict[str, MLOperand]


def _indices(shape: tuple[int, ...], size: int, itype: str) -> np.ndarray:
    lo = 0 if itype == "uint32" else -size - 2
    return rand(shape, itype, lo, size + 2)


@pytest.mark.parametrize("itype", ["int32", "uint32", "int64"])
@pytest.mark.parametrize("dtype", ["float32", "uint64", "int8"])
def test_gathers(dtype: str, itype: str) -> None:
    x = rand((4, 5, 3), dtype, 0, 100) if dtype != "float32" else rand((4, 5, 3))
    inputs = {"x": x, "i": _indices((2, 3), 5, itype), "e": _indices((4, 2, 3), 5, itype),
              "n": _indices((3, 2), 4, itype)}

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        return {"g": b.gather(o["x"], o["i"], axis=1),
                "g0": b.gather(o["x"], b.constant(np.array(-1, np.int32))),
                "ge": b.gather_elements(o["x"], o["e"], axis=1),
                "gn": b.gather_nd(o["x"], o["n"])}

    compare(inputs, build)


@pytest.mark.parametrize("itype", ["int32", "uint32", "int64"])
@pytest.mark.parametrize("axis", [0, 1])
def test_scatter_elements_last_update_wins(axis: int, itype: str) -> None:
    x = rand((4, 5), "float32")
    lo = 0 if itype == "uint32" else -7
    indices = rand((4, 5) if axis == 1 else (6, 5), itype, lo, 6)  # duplicates, clamping
    if axis == 0:
        x = rand((3, 5), "float32")
    updates = rand(indices.shape, "float32")

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        return {"y": b.scatter_elements(o["x"], o["i"], o["u"], axis=axis)}

    compare({"x": x, "i": indices, "u": updates}, build)


@pytest.mark.parametrize("dtype", ["float16", "int64", "uint32"])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_scatter_nd_last_update_wins(k: int, dtype: str) -> None:
    x = rand((3, 4, 2), dtype, 0, 50)
    indices = np.stack([rand((7,), "int64", -s - 1, s) for s in (3, 4, 2)[:k]], axis=-1)
    updates = rand((7, *x.shape[k:]), dtype, 50, 99)

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        return {"y": b.scatter_nd(o["x"], o["i"], o["u"])}

    compare({"x": x, "i": indices, "u": updates}, build)
