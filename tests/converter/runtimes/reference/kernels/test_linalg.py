"""Reference kernels matmul and gemm, run through MLGraphBuilder and the reference backend and
compared with onnxruntime one-node MatMul (13) and Gemm (13) models evaluated in float64 on the
same inputs (so the expectation is the float64 product rounded once). The spec casts gemm's
alpha and beta to the operand data type first, so the float16 oracle gets the rounded values.
"""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.webnn import MLGraphBuilder, MLOperand
from tests.converter.runtimes.reference.kernels.oracle import onnx_run, webnn

RNG = np.random.default_rng(20260623)


def assert_float(got: np.ndarray, ref: np.ndarray, dtype: str) -> None:
    assert got.dtype == np.dtype(dtype)
    assert got.shape == ref.shape
    eps = float(np.finfo(np.dtype(dtype)).eps)
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=eps, atol=eps * 1e-3)


def floats(shape: list[int], dtype: str) -> np.ndarray:
    return RNG.uniform(-2.0, 2.0, tuple(shape)).astype(dtype)


@pytest.mark.parametrize(("a_shape", "b_shape"), [
    ([3, 4], [4, 5]), ([1, 7], [7, 1]), ([2, 3, 4], [2, 4, 5]), ([2, 3, 4], [4, 5]),
    ([3, 4], [6, 4, 5]), ([2, 1, 3, 4], [5, 4, 6]), ([1, 2, 3, 4], [3, 1, 4, 2]),
    ([2, 1, 2, 1, 3, 4], [3, 1, 2, 4, 2])])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_matmul_against_onnx(a_shape: list[int], b_shape: list[int], dtype: str) -> None:
    a, b = floats(a_shape, dtype), floats(b_shape, dtype)
    got = webnn(lambda bld, a, b: bld.matmul(a, b), a=a, b=b)
    assert_float(got, onnx_run("MatMul", [a.astype(np.float64), b.astype(np.float64)], {}, 13),
                 dtype)


def _cast(value: float, dtype: str) -> float:
    """The spec's cast of a double option to the operand data type."""
    return float(np.array(value, np.float64).astype(dtype))


@pytest.mark.parametrize("c_shape", [None, [], [1], [5], [1, 5], [3, 1], [3, 5]], ids=str)
@pytest.mark.parametrize(("a_t", "b_t"), [(False, False), (True, False), (False, True),
                                          (True, True)])
@pytest.mark.parametrize(("alpha", "beta"), [(1.0, 1.0), (0.3, -1.7), (2.0, 0.0)])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_gemm_against_onnx(c_shape: list[int] | None, a_t: bool, b_t: bool, alpha: float,
                           beta: float, dtype: str) -> None:
    m, k, n = 3, 4, 5
    a = floats([k, m] if a_t else [m, k], dtype)
    b = floats([n, k] if b_t else [k, n], dtype)
    feeds = {"a": a, "b": b}
    if c_shape is not None:
        feeds["c"] = floats(c_shape, dtype)

    def build(bld: MLGraphBuilder, a: MLOperand, b: MLOperand,
              c: MLOperand | None = None) -> MLOperand:
        return bld.gemm(a, b, c=c, alpha=alpha, beta=beta, a_transpose=a_t, b_transpose=b_t)

    got = webnn(build, **feeds)
    ref = onnx_run("Gemm", [x.astype(np.float64) for x in feeds.values()],
                   {"alpha": _cast(alpha, dtype), "beta": _cast(beta, dtype), "transA": int(a_t),
                    "transB": int(b_t)}, 13)
    assert_float(got, ref, dtype)
