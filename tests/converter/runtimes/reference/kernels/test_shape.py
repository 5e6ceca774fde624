"""Reference kernels of the shape family, run through MLGraphBuilder and the reference backend
and compared with onnxruntime one-node models: Pad 19 (WebNN "reflection" is ONNX "reflect"),
Slice 13 (strides are ONNX steps; reverse is a Slice with step -1), Concat 13, Expand 13,
Reshape 19, Split 18, Tile 13, Transpose 13 and Trilu 14 (WebNN triangular: upper keeps
j - i >= diagonal, lower keeps j - i <= diagonal, exactly Trilu's `k`).

Data movement must be exact for every data type, so results are compared bit for bit,
including int64/uint64 values beyond 2^53 and float16 end to end.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.converter.runtimes.reference.kernels.oracle import assert_same
from tests.converter.runtimes.reference.kernels.oracle import onnx_outputs as onnx_run
from tests.converter.runtimes.reference.kernels.oracle import webnn_outputs as webnn

RNG = np.random.default_rng(20260623)
DTYPES = ("float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8")


def sample(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Random values spanning the type's range (int64/uint64 beyond float64 precision)."""
    if np.dtype(dtype).kind == "f":
        return RNG.uniform(-100.0, 100.0, shape).astype(dtype)
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, shape, endpoint=True, dtype=dtype)


# -- pad ---------------------------------------------------------------------------------
PAD_CASES = [
    ((3, 4), [1, 2], [2, 1]),
    ((2, 3, 4), [0, 2, 3], [1, 0, 3]),
    ((5,), [4], [4]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["constant", "edge", "reflection"])
@pytest.mark.parametrize(("shape", "begin", "end"), PAD_CASES)
def test_pad(dtype: str, mode: str, shape: tuple[int, ...], begin: list[int], end: list[int]
             ) -> None:
    x = sample(shape, dtype)
    value = -7 if np.dtype(dtype).kind != "u" else 7
    got, = webnn(lambda b, a: b.pad(a, begin, end, mode=mode, value=value), x)
    onnx_mode = {"constant": "constant", "edge": "edge", "reflection": "reflect"}[mode]
    consts: list[np.ndarray | None] = [np.array(begin + end, np.int64)]
    if mode == "constant":
        consts.append(np.array(value, dtype=dtype))
    ref, = onnx_run("Pad", [x], {"mode": onnx_mode}, consts)
    assert_same(got, ref)


@pytest.mark.parametrize(("dtype", "value", "fill"), [
    ("int8", 300, 127), ("uint8", -5, 0), ("int32", 2.5, 2), ("int32", 3.5, 4),
    ("float16", 1e6, np.inf), ("float16", 0.1, np.float16(0.1)), ("uint64", 2**64 + 5, 2**64 - 1),
    ("int64", 2**62 + 1, 2**62 + 1), ("float32", float("nan"), np.nan), ("int32", float("nan"), 0),
])
def test_pad_value_is_cast_to_the_input_type(dtype: str, value: Any, fill: Any) -> None:
    """MLNumber cast (spec): integers clamp then round half to even, NaN -> 0; floats round
    to nearest and overflow to infinity."""
    x = np.ones((2,), dtype)
    got, = webnn(lambda b, a: b.pad(a, [1], [2], value=value), x)
    expected = np.array([fill, 1, 1, fill, fill], dtype=dtype)
    assert_same(got, expected)


# -- slice and reverse -------------------------------------------------------------------
SLICE_CASES = [
    ((7,), [1], [6], [2]),
    ((5, 6), [0, 1], [5, 5], [2, 3]),
    ((4, 5, 6), [1, 0, 2], [3, 5, 4], [1, 4, 5]),
    ((3, 4), [2, 3], [1, 1], [1, 1]),
    ((6, 2, 9), [0, 1, 0], [6, 1, 9], [6, 1, 8]),
]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "uint8"])
@pytest.mark.parametrize(("shape", "starts", "sizes", "strides"), SLICE_CASES)
def test_slice_with_strides(dtype: str, shape: tuple[int, ...], starts: list[int],
                            sizes: list[int], strides: list[int]) -> None:
    x = sample(shape, dtype)
    got, = webnn(lambda b, a: b.slice(a, starts, sizes, strides=strides), x)
    ends = [s + n for s, n in zip(starts, sizes, strict=True)]
    ref, = onnx_run("Slice", [x], consts=[np.array(starts, np.int64), np.array(ends, np.int64),
                                          np.arange(len(shape), dtype=np.int64),
                                          np.array(strides, np.int64)])
    assert_same(got, ref)


@pytest.mark.parametrize("dtype", ["float16", "int32", "uint64"])
@pytest.mark.parametrize("axes", [None, [], [0], [1, 2], [2, 0, 1]])
def test_reverse(dtype: str, axes: list[int] | None) -> None:
    x = sample((3, 4, 5), dtype)
    got, = webnn(lambda b, a: b.reverse(a, axes=axes), x)
    flip = [0, 1, 2] if axes is None else axes
    if not flip:
        assert_same(got, x)
        return
    n = len(flip)
    ref, = onnx_run("Slice", [x], consts=[np.full(n, -1, np.int64),
                                          np.full(n, np.iinfo(np.int64).min, np.int64),
                                          np.array(flip, np.int64), np.full(n, -1, np.int64)])
    assert_same(got, ref)


# -- concat, expand, reshape, split, tile, transpose ---------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_concat(dtype: str) -> None:
    parts = [sample((2, k, 3), dtype) for k in (1, 4, 2)]
    got, = webnn(lambda b, *xs: b.concat(list(xs), 1), *parts)
    ref, = onnx_run("Concat", parts, {"axis": 1}, opset=13)
    assert_same(got, ref)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "uint64", "int8"])
@pytest.mark.parametrize(("shape", "new_shape"), [
    ((3, 1), [2, 3, 4]), ((1,), [5]), ((), [2, 2]), ((2, 1, 3), [2, 4, 3]), ((4,), [4]),
])
def test_expand(dtype: str, shape: tuple[int, ...], new_shape: list[int]) -> None:
    x = sample(shape, dtype)
    got, = webnn(lambda b, a: b.expand(a, new_shape), x)
    ref, = onnx_run("Expand", [x], consts=[np.array(new_shape, np.int64)], opset=13)
    assert_same(got, ref)


@pytest.mark.parametrize("dtype", ["float16", "uint32", "int64"])
@pytest.mark.parametrize(("shape", "new_shape"), [
    ((2, 3, 4), [6, 4]), ((24,), [2, 2, 2, 3]), ((1, 1), []), ((), [1, 1, 1]),
])
def test_reshape(dtype: str, shape: tuple[int, ...], new_shape: list[int]) -> None:
    x = sample(shape, dtype)
    got, = webnn(lambda b, a: b.reshape(a, new_shape), x)
    ref, = onnx_run("Reshape", [x], consts=[np.array(new_shape, np.int64)])
    assert_same(got, ref)


@pytest.mark.parametrize("dtype", ["float32", "float16", "uint64", "int8"])
@pytest.mark.parametrize(("shape", "splits", "axis"), [
    ((6, 2), 3, 0), ((2, 6), [1, 2, 3], 1), ((2, 3, 4), 1, 2), ((2, 3, 4), [4], 2),
    ((5,), [2, 3], 0),
])
def test_split(dtype: str, shape: tuple[int, ...], splits: int | list[int], axis: int) -> None:
    x = sample(shape, dtype)
    got = webnn(lambda b, a: b.split(a, splits, axis=axis), x)
    sizes = [shape[axis] // splits] * splits if isinstance(splits, int) else splits
    refs = onnx_run("Split", [x], {"axis": axis}, consts=[np.array(sizes, np.int64)],
                    opset=18, n_out=len(sizes))
    assert len(got) == len(refs)
    for g, r in zip(got, refs, strict=True):
        assert_same(g, r)


@pytest.mark.parametrize("dtype", ["float32", "float16", "uint32", "int64"])
@pytest.mark.parametrize(("shape", "reps"), [((2, 3), [2, 3]), ((4,), [1]), ((2, 1, 2), [1, 4, 2])])
def test_tile(dtype: str, shape: tuple[int, ...], reps: list[int]) -> None:
    x = sample(shape, dtype)
    got, = webnn(lambda b, a: b.tile(a, reps), x)
    ref, = onnx_run("Tile", [x], consts=[np.array(reps, np.int64)], opset=13)
    assert_same(got, ref)


@pytest.mark.parametrize("dtype", ["float32", "float16", "uint64", "int8"])
@pytest.mark.parametrize("perm", [None, [0, 2, 1, 3], [3, 1, 0, 2], [0, 1, 2, 3]])
def test_transpose(dtype: str, perm: list[int] | None) -> None:
    x = sample((2, 3, 4, 5), dtype)
    got, = webnn(lambda b, a: b.transpose(a, permutation=perm), x)
    ref, = onnx_run("Transpose", [x], {"perm": perm or [3, 2, 1, 0]}, opset=13)
    assert_same(got, ref)


# -- triangular ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int64", "uint8"])
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("diagonal", [-5, -1, 0, 2, 7])
@pytest.mark.parametrize("shape", [(4, 6), (2, 5, 3)])
def test_triangular(dtype: str, upper: bool, diagonal: int, shape: tuple[int, ...]) -> None:
    x = sample(shape, dtype)
    got, = webnn(lambda b, a: b.triangular(a, upper=upper, diagonal=diagonal), x)
    try:
        ref, = onnx_run("Trilu", [x], {"upper": int(upper)},
                        consts=[np.array(diagonal, np.int64)], opset=14)
    except Exception as exc:  # onnxruntime's Trilu lacks uint8/int8/uint32/uint64: use
        if "NOT_IMPLEMENTED" not in str(exc):  # the spec's rule, written out here
            raise
        i = np.arange(shape[-2])[:, None]
        j = np.arange(shape[-1])[None, :]
        keep = (j - i >= diagonal) if upper else (j - i <= diagonal)
        ref = np.where(keep, x, np.zeros((), x.dtype))
    assert_same(got, ref)


def test_float16_nan_and_signed_zero_move_unchanged() -> None:
    x = np.array([np.nan, -0.0, np.inf, 65504.0], np.float16).reshape(2, 2)
    got = webnn(lambda b, a: [b.transpose(a), b.tile(a, [1, 2]),
                              b.pad(a, [1, 0], [0, 1], mode="edge")], x)
    np.testing.assert_array_equal(got[0].view(np.uint16), x.T.view(np.uint16))
    np.testing.assert_array_equal(got[1].view(np.uint16), np.tile(x, (1, 2)).view(np.uint16))
    assert got[2].dtype == np.float16 and np.isnan(got[2][0, 0])
