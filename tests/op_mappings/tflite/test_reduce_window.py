"""REDUCE_WINDOW vs LiteRT: every reduce function, window/stride/dilation combinations on
ranks 1, 2 and 4, non-zero init values, float32, int32 and bool tensors, and the
window-size rule."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.errors import ConversionFailed
from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import In, S, check, op_model, rand

F = S.ReduceWindowFunction


def out_size(n: int, w: int, s: int, d: int) -> int:
    return (n - (w - 1) * d - 1) // s + 1


def model(x: np.ndarray, init, fn: int, window, strides, dil):
    o = S.ReduceWindowOptionsT()
    o.reduceFunction = fn
    out = [out_size(*a) for a in zip(x.shape, window, strides, dil, strict=True)]
    ins = [In(x), In(np.array(init, x.dtype), True)] + [
        In(np.array(v, np.int64), True) for v in (window, strides, dil)]
    return op_model("REDUCE_WINDOW", ins, [(out, x.dtype.name)], o)


GEOMETRY = [([7], [3], [2], [1]),
            ([5, 6], [2, 3], [1, 2], [2, 1]),
            ([1, 6, 5, 2], [1, 2, 2, 1], [1, 2, 1, 1], [1, 1, 2, 1]),
            ([2, 4, 4, 3], [1, 3, 3, 1], [1, 1, 1, 1], [1, 1, 1, 1])]


@pytest.mark.parametrize("fn,init", [(F.ADD, 0.5), (F.MUL, 1.0), (F.MINIMUM, np.inf),
                                     (F.MAXIMUM, -np.inf), (F.MAXIMUM, 0.25)])
@pytest.mark.parametrize("shape,window,strides,dil", GEOMETRY)
def test_float(fn: int, init: float, shape, window, strides, dil) -> None:
    x = rand(*shape, low=0.5, high=1.5, seed=1) if fn == F.MUL else rand(*shape, seed=1)
    m, feeds = model(x, init, fn, window, strides, dil)
    check(m, feeds)


@pytest.mark.parametrize("fn,init", [(F.ADD, 3), (F.MAXIMUM, -100), (F.MINIMUM, 100)])
def test_int32(fn: int, init: int) -> None:
    x = rand(4, 6, low=-50, high=50, seed=2, dtype="int32")
    m, feeds = model(x, init, fn, [2, 3], [2, 1], [1, 2])
    check(m, feeds)


@pytest.mark.parametrize("fn,init", [(F.ALL, True), (F.ANY, False)])
def test_bool(fn: int, init: bool) -> None:
    x = np.random.default_rng(3).random((5, 6)) > 0.3
    m, feeds = model(x, init, fn, [2, 2], [1, 2], [1, 1])
    check(m, feeds)


def test_window_too_large() -> None:
    m, _ = model(rand(4, 4), 0.0, F.ADD, [3, 1], [1, 1], [2, 1])
    with pytest.raises(ConversionFailed, match="exceeds dimension 4"):
        convert_tflite(m)
