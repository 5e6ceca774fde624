"""Reference kernels of the reduce family, argMin/argMax, cumulativeSum and softmax, run through
MLGraphBuilder and the reference backend and compared with onnxruntime one-node models
(ReduceX opset 18, ArgMin/ArgMax 13, CumSum 14, Softmax 13).

Float cases run onnxruntime in float64 on the same (already rounded) inputs, so the
expectation is the exact float64 result rounded once, which is what the spec's precision
model asks for. uint32/uint64 (which onnxruntime does not implement) and `axes=[]` (where
ONNX's `noop_with_empty_axes` skips the per-element function that WebNN still applies) are
checked against Python-integer / float64 formulas written from the spec.

argMin/argMax tie-break: the first (lowest) index, like ONNX `select_last_index=0`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from onnx import TensorProto

from tests.converter.runtimes.reference.kernels.oracle import onnx_run, webnn

RNG = np.random.default_rng(20260621)

ONNX_REDUCE = {"reduceL1": "ReduceL1", "reduceL2": "ReduceL2", "reduceLogSum": "ReduceLogSum",
               "reduceLogSumExp": "ReduceLogSumExp", "reduceMax": "ReduceMax",
               "reduceMean": "ReduceMean", "reduceMin": "ReduceMin",
               "reduceProduct": "ReduceProd", "reduceSum": "ReduceSum",
               "reduceSumSquare": "ReduceSumSquare"}
INT_REDUCE = ("reduceL1", "reduceMax", "reduceMin", "reduceProduct", "reduceSum",
              "reduceSumSquare")
METHOD = {"reduceL1": "reduce_l1", "reduceL2": "reduce_l2", "reduceLogSum": "reduce_log_sum",
          "reduceLogSumExp": "reduce_log_sum_exp", "reduceMax": "reduce_max",
          "reduceMean": "reduce_mean", "reduceMin": "reduce_min",
          "reduceProduct": "reduce_product", "reduceSum": "reduce_sum",
          "reduceSumSquare": "reduce_sum_square"}


# -- helpers -----------------------------------------------------------------------------------
def assert_float(got: np.ndarray, ref64: np.ndarray, dtype: str) -> None:
    """`got` equals the float64 reference rounded once (allowing the reference's own last-bit
    noise from a different summation order)."""
    assert got.dtype == np.dtype(dtype)
    assert got.shape == np.shape(ref64)
    eps = float(np.finfo(np.dtype(dtype)).eps)
    np.testing.assert_allclose(got.astype(np.float64), ref64, rtol=eps, atol=eps * 1e-3)


def floats(shape: tuple[int, ...], dtype: str, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return RNG.uniform(lo, hi, shape).astype(dtype)


# -- reductions --------------------------------------------------------------------------------
AXES_CASES = [None, [0], [1], [2, 0], [0, 1, 2]]


def _reduce_input(op: str, dtype: str) -> np.ndarray:
    lo, hi = {"reduceLogSum": (0.1, 2.0), "reduceProduct": (0.5, 1.5)}.get(op, (-2.0, 2.0))
    return floats((2, 3, 4), dtype, lo, hi)


def _onnx_reduce(op: str, x: np.ndarray, axes: list[int] | None, keep: bool) -> np.ndarray:
    inputs = [x] if axes is None else [x, np.array(axes, np.int64)]
    return onnx_run(ONNX_REDUCE[op], inputs, {"keepdims": int(keep)}, 18)


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("axes", AXES_CASES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("op", list(ONNX_REDUCE))
def test_reduce_float(op: str, dtype: str, axes: list[int] | None, keep: bool) -> None:
    x = _reduce_input(op, dtype)
    got = webnn(lambda b, x: getattr(b, METHOD[op])(x, axes=axes, keep_dimensions=keep), x=x)
    assert_float(got, _onnx_reduce(op, x.astype(np.float64), axes, keep), dtype)


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("axes", [None, [1], [2, 0]], ids=str)
@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("op", INT_REDUCE)
def test_reduce_int_exact(op: str, dtype: str, axes: list[int] | None, keep: bool) -> None:
    lo, hi = (-2, 3) if op == "reduceProduct" else (-1000, 1000)
    x = RNG.integers(lo, hi, (2, 3, 4)).astype(dtype)
    got = webnn(lambda b, x: getattr(b, METHOD[op])(x, axes=axes, keep_dimensions=keep), x=x)
    ref = _onnx_reduce(op, x, axes, keep)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("op", ["reduceMax", "reduceMin"])
def test_reduce_max_min_small_ints(op: str, dtype: str) -> None:
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, (3, 5), endpoint=True).astype(dtype)
    for axes in ([0], [1], None):
        got = webnn(lambda b, x, a=axes: getattr(b, METHOD[op])(x, axes=a), x=x)
        np.testing.assert_array_equal(got, _onnx_reduce(op, x, axes, False))


def _python_reduce(op: str, x: np.ndarray, axes: list[int]) -> np.ndarray:
    """Exact reduction with Python integers, wrapped to the input type like the output cast."""
    obj = x.astype(object)
    funcs: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        "reduceSum": lambda v: np.sum(v, axis=tuple(axes)),
        "reduceL1": lambda v: np.sum(abs(v), axis=tuple(axes)),
        "reduceSumSquare": lambda v: np.sum(v * v, axis=tuple(axes)),
        "reduceProduct": lambda v: np.prod(v, axis=tuple(axes)),
        "reduceMax": lambda v: np.max(v, axis=tuple(axes)),
        "reduceMin": lambda v: np.min(v, axis=tuple(axes))}
    bits = x.dtype.itemsize * 8
    out = np.asarray(funcs[op](obj), dtype=object)
    return np.vectorize(lambda n: int(n) % (1 << bits), otypes=[object])(out).astype(x.dtype)


@pytest.mark.parametrize("dtype", ["uint32", "uint64"])
@pytest.mark.parametrize("op", INT_REDUCE)
def test_reduce_unsigned_exact(op: str, dtype: str) -> None:
    hi = 4 if op == "reduceProduct" else 2**20
    x = RNG.integers(0, hi, (2, 3, 4), dtype=np.uint64).astype(dtype)
    if dtype == "uint64" and op in ("reduceSum", "reduceMax", "reduceMin", "reduceL1"):
        x[0, 0, 0] = np.uint64(2**64 - 5)  # beyond float64 precision and int64 range
    for axes in ([0], [2, 1], [0, 1, 2]):
        got = webnn(lambda b, x, a=axes: getattr(b, METHOD[op])(x, axes=a), x=x)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, _python_reduce(op, x, axes))


# The per-element function of each reduction over zero axes, from the spec formulas.
ELEMENT = {"reduceL1": np.abs, "reduceL2": lambda v: np.sqrt(v * v), "reduceLogSum": np.log,
           "reduceLogSumExp": lambda v: np.log(np.exp(v)), "reduceMax": lambda v: v,
           "reduceMean": lambda v: v, "reduceMin": lambda v: v, "reduceProduct": lambda v: v,
           "reduceSum": lambda v: v, "reduceSumSquare": lambda v: v * v}


@pytest.mark.parametrize("op", list(ONNX_REDUCE))
def test_reduce_empty_axes_and_scalar_apply_the_element_function(op: str) -> None:
    x = _reduce_input(op, "float32")
    got = webnn(lambda b, x: getattr(b, METHOD[op])(x, axes=[], keep_dimensions=True), x=x)
    assert_float(got, ELEMENT[op](x.astype(np.float64)), "float32")
    s = np.array(-1.5 if op != "reduceLogSum" else 1.5, np.float16)
    got = webnn(lambda b, x: getattr(b, METHOD[op])(x), x=s)
    assert got.shape == ()
    assert_float(got, ELEMENT[op](s.astype(np.float64)), "float16")
    if op in INT_REDUCE:
        i = np.array([[-3, 4], [5, -6]], np.int32)
        got = webnn(lambda b, x: getattr(b, METHOD[op])(x, axes=[]), x=i)
        np.testing.assert_array_equal(got, ELEMENT[op](i.astype(np.int64)).astype(np.int32))


def test_reduce_log_sum_exp_large_values_do_not_overflow() -> None:
    x = np.array([[1000.0, 1000.0], [-1000.0, -1e30]], np.float32)
    got = webnn(lambda b, x: b.reduce_log_sum_exp(x, axes=[1]), x=x)
    # log(2 e^1000) = 1000 + log 2; log(e^-1000 + e^-1e30) = -1000.
    assert_float(got, np.array([1000.0 + math.log(2.0), -1000.0]), "float32")
    np.testing.assert_array_equal(
        webnn(lambda b, x: b.reduce_log_sum_exp(x), x=np.full((2, 2), -np.inf, np.float32)),
        np.float32(-np.inf))
    # Over no axes log(exp(x)) = x, even where exp(x) alone would overflow float64.
    e = np.array([1e30, -np.inf, np.inf, -2.5], np.float32)
    np.testing.assert_array_equal(webnn(lambda b, x: b.reduce_log_sum_exp(x, axes=[]), x=e), e)


# -- argMin / argMax ---------------------------------------------------------------------------
@pytest.mark.parametrize("out_type", ["int32", "int64"])
@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int64", "int8", "uint8"])
@pytest.mark.parametrize("op", ["argMin", "argMax"])
def test_arg_min_max_against_onnx(op: str, dtype: str, keep: bool, out_type: str) -> None:
    # Few distinct values, so most slices contain ties.
    x = RNG.integers(0, 4, (3, 4, 5)).astype(dtype)
    method = "arg_min" if op == "argMin" else "arg_max"
    for axis in range(3):
        got = webnn(lambda b, x, a=axis: getattr(b, method)(
            x, a, keep_dimensions=keep, output_data_type=out_type), x=x)
        ref = onnx_run("ArgMin" if op == "argMin" else "ArgMax", [x],
                       {"axis": axis, "keepdims": int(keep), "select_last_index": 0}, 13,
                       TensorProto.INT64)
        assert got.dtype == np.dtype(out_type)
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("dtype", ["uint32", "uint64", "float32"])
def test_arg_min_max_first_index_on_ties(dtype: str) -> None:
    x = np.array([[1, 3, 3, 0], [2, 2, 1, 1], [7, 7, 7, 7]], dtype=dtype)
    # Written from the documented rule: the first index holding the extreme value.
    np.testing.assert_array_equal(webnn(lambda b, x: b.arg_max(x, 1), x=x), [1, 0, 0])
    np.testing.assert_array_equal(webnn(lambda b, x: b.arg_min(x, 1), x=x), [3, 2, 0])
    np.testing.assert_array_equal(
        webnn(lambda b, x: b.arg_max(x, 0, keep_dimensions=True, output_data_type="int64"),
              x=x), [[2, 2, 2, 2]])
    if dtype == "uint64":
        big = np.array([2**64 - 1, 2**64 - 2, 2**64 - 1], np.uint64)  # not float64-exact
        np.testing.assert_array_equal(webnn(lambda b, x: b.arg_max(x, 0), x=big), 0)
        np.testing.assert_array_equal(webnn(lambda b, x: b.arg_min(x, 0), x=big), 1)


# -- cumulativeSum -----------------------------------------------------------------------------
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int64"])
def test_cumulative_sum_against_onnx(dtype: str, exclusive: bool, reverse: bool) -> None:
    x = (floats((3, 4, 5), dtype) if dtype.startswith("float")
         else RNG.integers(-1000, 1000, (3, 4, 5)).astype(dtype))
    oracle_in = x.astype(np.float64) if dtype.startswith("float") else x
    for axis in range(3):
        got = webnn(lambda b, x, a=axis: b.cumulative_sum(x, a, exclusive=exclusive,
                                                          reversed=reverse), x=x)
        ref = onnx_run("CumSum", [oracle_in, np.array(axis, np.int64)],
                       {"exclusive": int(exclusive), "reverse": int(reverse)}, 14)
        if dtype.startswith("float"):
            assert_float(got, ref, dtype)
        else:
            assert got.dtype == np.dtype(dtype)
            np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("dtype", ["uint32", "uint64"])
def test_cumulative_sum_unsigned_exact(dtype: str) -> None:
    x = np.array([[1, 2, 3, 4], [2**31, 2**31, 5, 6]], dtype=dtype)
    bits = x.dtype.itemsize * 8
    wrap = np.vectorize(lambda n: int(n) % (1 << bits), otypes=[object])
    cases = {(False, False): [[1, 3, 6, 10], [2**31, 2**32, 2**32 + 5, 2**32 + 11]],
             (True, False): [[0, 1, 3, 6], [0, 2**31, 2**32, 2**32 + 5]],
             (False, True): [[10, 9, 7, 4], [2**32 + 11, 2**31 + 11, 11, 6]],
             (True, True): [[9, 7, 4, 0], [2**31 + 11, 11, 6, 0]]}
    for (exclusive, reverse), expected in cases.items():
        got = webnn(lambda b, x, e=exclusive, r=reverse: b.cumulative_sum(
            x, 1, exclusive=e, reversed=r), x=x)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, wrap(np.array(expected, object)).astype(dtype))


# -- softmax -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_softmax_against_onnx(dtype: str) -> None:
    x = floats((2, 3, 4, 5), dtype, -8.0, 8.0)
    for axis in range(4):
        got = webnn(lambda b, x, a=axis: b.softmax(x, a), x=x)
        assert_float(got, onnx_run("Softmax", [x.astype(np.float64)], {"axis": axis}, 13), dtype)


def test_softmax_large_and_masked_values() -> None:
    x = np.array([[1e4, 1e4 - 1.0, -np.inf], [-3e38, 0.0, 3e38]], np.float32)
    got = webnn(lambda b, x: b.softmax(x, 1), x=x)
    assert not np.isnan(got).any()
    assert_float(got, onnx_run("Softmax", [x.astype(np.float64)], {"axis": 1}, 13), "float32")
