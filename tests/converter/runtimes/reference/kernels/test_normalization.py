"""Reference kernels batchNormalization, instanceNormalization and layerNormalization, run
through MLGraphBuilder and the reference backend and compared with onnxruntime one-node models
(BatchNormalization 15, InstanceNormalization 6, LayerNormalization 17).

Mapping to ONNX: a WebNN batchNormalization `axis` other than 1 is moved to position 1 (and
back) around the ONNX node; `nhwc` instanceNormalization is transposed to NCHW; WebNN
layerNormalization `axes` (any order, not necessarily trailing) are permuted to the end, in
the given order, so ONNX's `axis` = first normalized axis covers exactly them. Absent
scale/bias become ones/zeros. The spec casts epsilon to the input data type first, so the
float16 oracles receive the float16-rounded epsilon.

Float cases run onnxruntime in float64 (InstanceNormalization only exists in float32/16 there,
so it uses float32 with a float32 tolerance). `axes=[]` (no ONNX equivalent) is checked
against the spec formula: x - mean is 0, so the output is the bias (or 0).
"""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.webnn import MLGraphBuilder, MLOperand
from tests.converter.runtimes.reference.kernels.oracle import onnx_run, webnn

RNG = np.random.default_rng(20260622)


def assert_float(got: np.ndarray, ref: np.ndarray, dtype: str, scale: float = 1.0) -> None:
    assert got.dtype == np.dtype(dtype)
    assert got.shape == ref.shape
    eps = float(np.finfo(np.dtype(dtype)).eps) * scale
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=eps, atol=eps)


def floats(shape: tuple[int, ...] | list[int], dtype: str, lo: float = -2.0,
           hi: float = 2.0) -> np.ndarray:
    return RNG.uniform(lo, hi, tuple(shape)).astype(dtype)


def cast_eps(eps: float, dtype: str) -> float:
    return float(np.array(eps, np.float64).astype(dtype))


# -- batchNormalization ------------------------------------------------------------------------
@pytest.mark.parametrize(("shape", "axis"), [([2, 3, 4, 5], 1), ([2, 3, 4, 5], 3),
                                             ([2, 3, 4, 5], 0), ([3, 6], 1), ([4], 0),
                                             ([2, 2, 3, 2, 2], 2)])
@pytest.mark.parametrize("with_scale,with_bias", [(True, True), (False, False), (True, False),
                                                  (False, True)])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_batch_normalization_against_onnx(shape: list[int], axis: int, with_scale: bool,
                                          with_bias: bool, dtype: str) -> None:
    c = shape[axis]
    x = floats(shape, dtype)
    mean = floats([c], dtype)
    var = floats([c], dtype, 0.1, 3.0)
    scale = floats([c], dtype) if with_scale else None
    bias = floats([c], dtype) if with_bias else None
    eps = 1e-3 if with_scale else 1e-5
    feeds = {"x": x, "m": mean, "v": var}
    if scale is not None:
        feeds["s"] = scale
    if bias is not None:
        feeds["c"] = bias

    def build(b: MLGraphBuilder, x: MLOperand, m: MLOperand, v: MLOperand,
              s: MLOperand | None = None, c: MLOperand | None = None) -> MLOperand:
        return b.batch_normalization(x, m, v, scale=s, bias=c, axis=axis, epsilon=eps)

    got = webnn(build, **feeds)
    f64 = np.float64
    xt = x.astype(f64)[None] if x.ndim == 1 else np.moveaxis(x.astype(f64), axis, 1)
    ref = onnx_run("BatchNormalization",
                   [xt, np.ones(c) if scale is None else scale.astype(f64),
                    np.zeros(c) if bias is None else bias.astype(f64), mean.astype(f64),
                    var.astype(f64)], {"epsilon": cast_eps(eps, dtype)}, 15)
    ref = ref[0] if x.ndim == 1 else np.moveaxis(ref, 1, axis)
    assert_float(got, ref, dtype, 2.0)


# -- instanceNormalization ---------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("with_scale,with_bias", [(True, True), (False, False), (True, False),
                                                  (False, True)])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_instance_normalization_against_onnx(layout: str, with_scale: bool, with_bias: bool,
                                             dtype: str) -> None:
    nchw = (2, 3, 4, 5)
    x_nchw = floats(nchw, dtype, -3.0, 5.0)
    x = x_nchw if layout == "nchw" else np.ascontiguousarray(x_nchw.transpose(0, 2, 3, 1))
    scale = floats([3], dtype) if with_scale else None
    bias = floats([3], dtype) if with_bias else None
    eps = 1e-2 if with_bias else 1e-5
    feeds = {"x": x}
    if scale is not None:
        feeds["s"] = scale
    if bias is not None:
        feeds["c"] = bias

    def build(b: MLGraphBuilder, x: MLOperand, s: MLOperand | None = None,
              c: MLOperand | None = None) -> MLOperand:
        return b.instance_normalization(x, scale=s, bias=c, epsilon=eps, layout=layout)

    got = webnn(build, **feeds)
    f32 = np.float32
    ref = onnx_run("InstanceNormalization",
                   [x_nchw.astype(f32), np.ones(3, f32) if scale is None else scale.astype(f32),
                    np.zeros(3, f32) if bias is None else bias.astype(f32)],
                   {"epsilon": cast_eps(eps, dtype)}, 6).astype(np.float64)
    if layout == "nhwc":
        ref = ref.transpose(0, 2, 3, 1)
    # onnxruntime computes in float32: allow a few float32 ulps on top of the rounding.
    assert_float(got, ref, dtype, 16.0 if dtype == "float32" else 1.0)


# -- layerNormalization ------------------------------------------------------------------------
def _onnx_layer_norm(x: np.ndarray, axes: list[int], scale: np.ndarray, bias: np.ndarray,
                     eps: float) -> np.ndarray:
    perm = [i for i in range(x.ndim) if i not in axes] + list(axes)
    y = onnx_run("LayerNormalization", [x.transpose(perm), scale, bias],
                 {"axis": x.ndim - len(axes), "epsilon": eps}, 17)
    return y.transpose(np.argsort(perm))


@pytest.mark.parametrize(("shape", "axes"), [
    ([2, 3, 4], None), ([2, 3, 4], [2]), ([2, 3, 4], [0, 2]), ([2, 3, 4], [2, 1]),
    ([2, 3, 4], [1, 0, 2]), ([2, 3, 4, 5], None), ([2, 3, 4, 5], [3, 1]), ([6, 7], [0]),
    ([5], [0])])
@pytest.mark.parametrize("with_scale,with_bias", [(True, True), (False, False), (False, True)])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_layer_normalization_against_onnx(shape: list[int], axes: list[int] | None,
                                          with_scale: bool, with_bias: bool, dtype: str) -> None:
    resolved = list(range(1, len(shape))) if axes is None else axes
    pshape = [shape[a] for a in resolved]
    x = floats(shape, dtype, -3.0, 4.0)
    scale = floats(pshape, dtype) if with_scale else None
    bias = floats(pshape, dtype) if with_bias else None
    eps = 1e-5
    feeds = {"x": x}
    if scale is not None:
        feeds["s"] = scale
    if bias is not None:
        feeds["c"] = bias

    def build(b: MLGraphBuilder, x: MLOperand, s: MLOperand | None = None,
              c: MLOperand | None = None) -> MLOperand:
        return b.layer_normalization(x, scale=s, bias=c, axes=axes, epsilon=eps)

    got = webnn(build, **feeds)
    f64 = np.float64
    ref = _onnx_layer_norm(x.astype(f64), resolved,
                           np.ones(pshape) if scale is None else scale.astype(f64),
                           np.zeros(pshape) if bias is None else bias.astype(f64),
                           cast_eps(eps, dtype))
    assert_float(got, ref, dtype, 2.0)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_layer_normalization_without_axes_gives_bias(dtype: str) -> None:
    # Default axes for rank <= 1 are []: x - mean(x over nothing) = 0, output = 0·scale + bias.
    x = floats([5], dtype)
    bias = np.array(0.75, dtype)
    got = webnn(lambda b, x, c: b.layer_normalization(x, bias=c), x=x, c=bias)
    np.testing.assert_array_equal(got, np.full(5, 0.75, dtype))
    x3 = floats([2, 3], dtype)
    scale3 = floats([], dtype)
    got = webnn(lambda b, x, s: b.layer_normalization(x, scale=s, axes=[]), x=x3, s=scale3)
    np.testing.assert_array_equal(got, np.zeros((2, 3), dtype))
