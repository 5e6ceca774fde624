"""Reference kernels of the gather family, run through MLGraphBuilder and the reference backend
and compared with onnxruntime one-node models: Gather 13, GatherElements 13, GatherND 13
(batch_dims 0), ScatterElements 18 and ScatterND 18 (reduction "none"), including negative
indices (which both count from the end of the dimension) and every WebNN index type
(onnxruntime gets uint32 indices, and GatherND/ScatterND indices, widened to int64: ONNX has
no uint32 indices and GatherND/ScatterND take int64 only).

Where ONNX leaves behaviour undefined the tests use a Python oracle written from the rules the
reference runtime documents: out-of-range indices are clamped into [-size, size - 1] before
negative ones wrap, and for duplicate scatter indices the update that comes last in
row-major order wins.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from converter.core.webnn import MLOperand
from tests.converter.runtimes.reference.kernels import oracle
from tests.converter.runtimes.reference.kernels.oracle import assert_same, webnn_outputs

RNG = np.random.default_rng(20260624)
INDEX_TYPES = ("int32", "uint32", "int64")
VALUE_TYPES = ("float32", "float16", "int64", "uint8")


def sample(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if np.dtype(dtype).kind == "f":
        return RNG.uniform(-100.0, 100.0, shape).astype(dtype)
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, shape, endpoint=True, dtype=dtype)


def indices_for(size: int, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Random valid indices; negative ones (counting from the end) for signed types."""
    idx = RNG.integers(0, size, shape)
    if dtype != "uint32":
        idx = np.where(RNG.random(shape) < 0.5, idx - size, idx)
    return idx.astype(dtype)


def onnx_run(op: str, inputs: list[np.ndarray], attrs: dict[str, Any], opset: int
             ) -> np.ndarray:
    """The one-node ONNX oracle, with uint32 / ND indices given as int64 (ONNX's types)."""
    if op in ("GatherND", "ScatterND") or inputs[1].dtype == np.uint32:
        inputs = [inputs[0], inputs[1].astype(np.int64), *inputs[2:]]
    return oracle.onnx_run(op, inputs, attrs, opset)


def webnn(build: Callable[..., MLOperand], *inputs: np.ndarray) -> np.ndarray:
    return webnn_outputs(build, *inputs)[0]


def spec_index(i: int, size: int) -> int:
    """Clamp into [-size, size - 1], then wrap negatives."""
    i = min(max(int(i), -size), size - 1)
    return i + size if i < 0 else i


# -- gather --------------------------------------------------------------------------------
@pytest.mark.parametrize("index_type", INDEX_TYPES)
@pytest.mark.parametrize("dtype", VALUE_TYPES)
@pytest.mark.parametrize(("shape", "indices_shape", "axis"), [
    ((5,), (), 0), ((4, 3), (2, 3), 0), ((2, 5, 3), (4,), 1), ((2, 3, 4), (2, 1, 2), 2),
])
def test_gather(index_type: str, dtype: str, shape: tuple[int, ...],
                indices_shape: tuple[int, ...], axis: int) -> None:
    x = sample(shape, dtype)
    idx = indices_for(shape[axis], indices_shape, index_type)
    got = webnn(lambda b, a, i: b.gather(a, i, axis=axis), x, idx)
    assert_same(got, onnx_run("Gather", [x, idx], {"axis": axis}, 13))


def test_gather_clamps_out_of_range_indices() -> None:
    x = sample((4, 3), "float32")
    idx = np.array([[-9, -5, -4, -1], [0, 3, 4, 2**31 - 1]], np.int32)
    got = webnn(lambda b, a, i: b.gather(a, i), x, idx)
    expected = np.stack([np.stack([x[spec_index(i, 4)] for i in row]) for row in idx])
    assert_same(got, expected)
    big = np.array([2**40, -(2**40)], np.int64)
    assert_same(webnn(lambda b, a, i: b.gather(a, i, axis=1), x, big), x[:, [2, 0]])
    huge = np.array([2**32 - 1], np.uint32)
    assert_same(webnn(lambda b, a, i: b.gather(a, i), x, huge), x[[3]])


# -- gatherElements ------------------------------------------------------------------------
@pytest.mark.parametrize("index_type", INDEX_TYPES)
@pytest.mark.parametrize("dtype", VALUE_TYPES)
@pytest.mark.parametrize(("shape", "axis", "size"), [
    ((5,), 0, 3), ((3, 4), 1, 6), ((3, 4), 0, 2), ((2, 3, 4), 1, 5),
])
def test_gather_elements(index_type: str, dtype: str, shape: tuple[int, ...], axis: int,
                         size: int) -> None:
    x = sample(shape, dtype)
    indices_shape = list(shape)
    indices_shape[axis] = size
    idx = indices_for(shape[axis], tuple(indices_shape), index_type)
    got = webnn(lambda b, a, i: b.gather_elements(a, i, axis=axis), x, idx)
    assert_same(got, onnx_run("GatherElements", [x, idx], {"axis": axis}, 13))


def test_gather_elements_clamps() -> None:
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    idx = np.array([[7, -7], [-1, 3]], np.int64)
    got = webnn(lambda b, a, i: b.gather_elements(a, i, axis=1), x, idx)
    assert_same(got, np.array([[2, 0], [5, 5]], np.int32))


# -- gatherND ------------------------------------------------------------------------------
@pytest.mark.parametrize("index_type", INDEX_TYPES)
@pytest.mark.parametrize("dtype", VALUE_TYPES)
@pytest.mark.parametrize(("shape", "indices_shape"), [
    ((5,), (3, 1)), ((3, 4), (2,)), ((3, 4, 2), (2, 2, 1)), ((3, 4, 2), (5, 3)), ((2, 3), (1, 2)),
])
def test_gather_nd(index_type: str, dtype: str, shape: tuple[int, ...],
                   indices_shape: tuple[int, ...]) -> None:
    x = sample(shape, dtype)
    k = indices_shape[-1]
    idx = np.stack([indices_for(shape[d], indices_shape[:-1], index_type) for d in range(k)],
                   axis=-1)
    got = webnn(lambda b, a, i: b.gather_nd(a, i), x, idx)
    assert_same(got, onnx_run("GatherND", [x, idx], {}, 13))


def test_gather_nd_clamps_each_coordinate() -> None:
    x = sample((3, 4, 2), "float16")
    idx = np.array([[5, -9], [-4, 3], [1, 100]], np.int32)
    got = webnn(lambda b, a, i: b.gather_nd(a, i), x, idx)
    expected = np.stack([x[spec_index(r, 3), spec_index(c, 4)] for r, c in idx])
    assert_same(got, expected)


# -- scatterElements -----------------------------------------------------------------------
def _distinct_along(axis: int, shape: tuple[int, ...], size: int, dtype: str) -> np.ndarray:
    """Indices with no duplicate target: a random permutation slice along `axis`."""
    moved = list(shape)
    moved.pop(axis)
    perms = np.argsort(RNG.random((*moved, shape[axis])), axis=-1)[..., :size]
    idx = np.moveaxis(perms, -1, axis)
    if dtype != "uint32":
        idx = np.where(RNG.random(idx.shape) < 0.5, idx - shape[axis], idx)
    return idx.astype(dtype)


@pytest.mark.parametrize("index_type", INDEX_TYPES)
@pytest.mark.parametrize("dtype", VALUE_TYPES)
@pytest.mark.parametrize(("shape", "axis", "size"), [
    ((6,), 0, 3), ((4, 3), 0, 2), ((4, 3), 1, 3), ((2, 5, 3), 1, 4),
])
def test_scatter_elements(index_type: str, dtype: str, shape: tuple[int, ...], axis: int,
                          size: int) -> None:
    x = sample(shape, dtype)
    idx = _distinct_along(axis, shape, size, index_type)
    upd = sample(idx.shape, dtype)
    got = webnn(lambda b, a, i, u: b.scatter_elements(a, i, u, axis=axis), x, idx, upd)
    assert_same(got, onnx_run("ScatterElements", [x, idx, upd], {"axis": axis}, 18))


def test_scatter_elements_duplicates_last_wins_and_clamps() -> None:
    x = np.zeros((3, 4), np.int64)
    idx = np.array([[0, 5, -1, 1], [0, 1, -9, 1], [0, 2, 2, 1]], np.int32)
    upd = np.arange(1, 13, dtype=np.int64).reshape(3, 4) + 2**60
    got = webnn(lambda b, a, i, u: b.scatter_elements(a, i, u, axis=0), x, idx, upd)
    expected = x.copy()
    for r, c in itertools.product(range(3), range(4)):  # sequential, row-major
        expected[spec_index(idx[r, c], 3), c] = upd[r, c]
    assert_same(got, expected)


# -- scatterND -----------------------------------------------------------------------------
@pytest.mark.parametrize("index_type", INDEX_TYPES)
@pytest.mark.parametrize("dtype", VALUE_TYPES)
@pytest.mark.parametrize(("shape", "count", "k"), [
    ((8,), 4, 1), ((4, 3), 3, 2), ((4, 3, 2), 2, 1), ((4, 3, 2), 5, 2), ((2, 2, 2), 8, 3),
])
def test_scatter_nd(index_type: str, dtype: str, shape: tuple[int, ...], count: int, k: int
                    ) -> None:
    x = sample(shape, dtype)
    flat = RNG.permutation(int(np.prod(shape[:k])))[:count]
    coords = np.stack(np.unravel_index(flat, shape[:k]), axis=-1)
    if index_type != "uint32":
        dims = np.array(shape[:k])
        coords = np.where(RNG.random(coords.shape) < 0.5, coords - dims, coords)
    idx = coords.astype(index_type)
    upd = sample((count, *shape[k:]), dtype)
    got = webnn(lambda b, a, i, u: b.scatter_nd(a, i, u), x, idx, upd)
    assert_same(got, onnx_run("ScatterND", [x, idx, upd], {}, 18))


def test_scatter_nd_duplicates_last_wins_and_clamps() -> None:
    x = np.zeros((3, 2), np.float16)
    idx = np.array([[[1], [7]], [[-1], [1]], [[-3], [-8]]], np.int64)  # shape [3, 2, 1]
    upd = np.arange(12, dtype=np.float16).reshape(3, 2, 2)
    got = webnn(lambda b, a, i, u: b.scatter_nd(a, i, u), x, idx, upd)
    expected = x.copy()
    for p, q in itertools.product(range(3), range(2)):
        expected[spec_index(idx[p, q, 0], 3)] = upd[p, q]
    assert_same(got, expected)
