"""Reference kernels averagePool2d, l2Pool2d and maxPool2d against onnxruntime one-node models
(AveragePool with count_include_pad=0, LpPool p=2, MaxPool; opset 19), for what the WPT cases
do not cover: nhwc, asymmetric padding, dilations, ceil rounding, outputSizes, long windows,
global pooling, float16, and maxPool2d on integer types.

Two behaviours have no onnxruntime equivalent and are checked against a direct float64 loop
written from the spec in this file: ceil-rounded windows that start in (or past) the end
padding, which ONNX drops, and windows that hold no real cell at all (0 by this project's
convention). onnxruntime runs float32 (AveragePool, LpPool) or float64 (MaxPool, also used
for int32/uint32/int64/uint64 data with values float64 holds exactly).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper

from converter.core.webnn import ML, MLGraphBuilder

RNG = np.random.default_rng(20260628)
METHOD = {"averagePool2d": "average_pool2d", "l2Pool2d": "l2_pool2d", "maxPool2d": "max_pool2d"}
ONNX_OP = {"averagePool2d": "AveragePool", "l2Pool2d": "LpPool", "maxPool2d": "MaxPool"}


def onnx_pool(op: str, x: np.ndarray, attrs: dict[str, Any]) -> np.ndarray:
    attrs = dict(attrs)
    if op == "averagePool2d":
        attrs["count_include_pad"] = 0
    elif op == "l2Pool2d":
        attrs["p"] = 2
    info = helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(x.dtype),
                                         list(x.shape))
    out = helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(x.dtype), None)
    graph = helper.make_graph([helper.make_node(ONNX_OP[op], ["x"], ["y"], **attrs)], "g",
                              [info], [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(["y"], {"x": x})[0]


def run_webnn(op: str, x: np.ndarray, **options: Any) -> np.ndarray:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    y = getattr(b, METHOD[op])(b.input("x", list(x.shape), x.dtype.name), **options)
    out = ctx.compute(b.build({"y": y}), {"x": x})["y"]
    assert out.dtype == x.dtype and list(out.shape) == list(y.shape)
    return out


def spec_pool(op: str, x: np.ndarray, window: list[int], padding: list[int],
              strides: list[int], dilations: list[int], out_hw: tuple[int, int]) -> np.ndarray:
    """Direct NCHW loop over output cells: the reduction over the window's real cells only,
    in float64; 0 for a window without any real cell."""
    n, c, h, w = x.shape
    out = np.zeros((n, c, *out_hw))
    for oy in range(out_hw[0]):
        for ox in range(out_hw[1]):
            rows = [oy * strides[0] - padding[0] + i * dilations[0] for i in range(window[0])]
            cols = [ox * strides[1] - padding[2] + j * dilations[1] for j in range(window[1])]
            rows = [r for r in rows if 0 <= r < h]
            cols = [q for q in cols if 0 <= q < w]
            if not rows or not cols:
                continue
            cells = x[:, :, rows][:, :, :, cols].astype(np.float64).reshape(n, c, -1)
            if op == "averagePool2d":
                out[:, :, oy, ox] = cells.mean(axis=-1)
            elif op == "l2Pool2d":
                out[:, :, oy, ox] = np.sqrt((cells * cells).sum(axis=-1))
            else:
                out[:, :, oy, ox] = cells.max(axis=-1)
    return out


def to_layout(nchw: np.ndarray, layout: str) -> np.ndarray:
    return nchw if layout == "nchw" else np.ascontiguousarray(nchw.transpose(0, 2, 3, 1))


def assert_close(got: np.ndarray, expected: np.ndarray) -> None:
    if got.dtype.kind in "iu":
        np.testing.assert_array_equal(got, expected)
    elif got.dtype == np.float16:
        np.testing.assert_allclose(got.astype(np.float32), expected.astype(np.float32),
                                   rtol=1e-3, atol=1e-3)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


# (N, C, H, W), window, padding [t, b, l, r], strides, dilations, rounding
CASES = {
    "window": ((1, 2, 5, 6), [2, 3], [0, 0, 0, 0], [1, 1], [1, 1], "floor"),
    "asym-padding": ((2, 3, 5, 5), [3, 3], [1, 0, 2, 1], [1, 1], [1, 1], "floor"),
    "strides-dilations": ((1, 2, 9, 8), [2, 3], [1, 1, 0, 2], [2, 1], [3, 2], "floor"),
    "ceil": ((1, 2, 6, 7), [3, 2], [1, 0, 0, 0], [2, 2], [1, 1], "ceil"),
    "ceil-dilated": ((1, 2, 8, 9), [2, 2], [0, 1, 1, 0], [3, 2], [2, 2], "ceil"),
    "long-window": ((1, 2, 20, 19), [18, 17], [1, 1, 0, 1], [2, 3], [1, 1], "floor"),
    "one-tap-rows": ((1, 2, 5, 6), [1, 3], [0, 0, 1, 1], [2, 1], [1, 1], "floor"),
    "single-output-dilated": ((2, 2, 3, 5), [2, 3], [0, 0, 0, 0], [1, 1], [2, 2], "floor"),
}


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("op", list(METHOD))
def test_pool_matches_onnxruntime(op: str, name: str, layout: str) -> None:
    shape, window, pad, strides, dil, rounding = CASES[name]
    x = RNG.uniform(-1, 1, shape).astype(np.float32)
    attrs = {"kernel_shape": window, "pads": [pad[0], pad[2], pad[1], pad[3]],
             "strides": strides, "dilations": dil, "ceil_mode": int(rounding == "ceil")}
    src = x.astype(np.float64) if op == "maxPool2d" else x
    expected = onnx_pool(op, src, attrs).astype(np.float32)
    got = run_webnn(op, to_layout(x, layout), window_dimensions=window, padding=pad,
                    strides=strides, dilations=dil, layout=layout,
                    output_shape_rounding=rounding)
    assert_close(got, to_layout(expected, layout))


@pytest.mark.parametrize("op", list(METHOD))
def test_output_sizes_select_the_rounding(op: str) -> None:
    shape, window, pad, strides, dil, _ = CASES["ceil"]
    x = RNG.uniform(-1, 1, shape).astype(np.float32)
    options = {"window_dimensions": window, "padding": pad, "strides": strides}
    ceil = run_webnn(op, x, output_shape_rounding="ceil", **options)
    floor = run_webnn(op, x, **options)
    assert ceil.shape != floor.shape
    np.testing.assert_array_equal(run_webnn(op, x, output_sizes=list(ceil.shape[2:]),
                                            **options), ceil)
    np.testing.assert_array_equal(run_webnn(op, x, output_sizes=list(floor.shape[2:]),
                                            output_shape_rounding="ceil", **options), floor)


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("op", list(METHOD))
@pytest.mark.parametrize("spatial", [(5, 4), (23, 21)])
def test_global_pooling(op: str, spatial: tuple[int, int], layout: str) -> None:
    x = RNG.uniform(-1, 1, (2, 3, *spatial)).astype(np.float32)
    onnx_global = {"averagePool2d": "GlobalAveragePool", "l2Pool2d": "GlobalLpPool",
                   "maxPool2d": "GlobalMaxPool"}[op]
    info = helper.make_tensor_value_info("x", 1, list(x.shape))
    out = helper.make_tensor_value_info("y", 1, None)
    graph = helper.make_graph([helper.make_node(onnx_global, ["x"], ["y"])], "g", [info], [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = sess.run(["y"], {"x": x})[0]
    got = run_webnn(op, to_layout(x, layout), layout=layout)
    assert_close(got, to_layout(expected, layout))


@pytest.mark.parametrize("op", list(METHOD))
def test_float16(op: str) -> None:
    shape, window, pad, strides, dil, rounding = CASES["asym-padding"]
    x = RNG.uniform(-4, 4, shape).astype(np.float16)
    attrs = {"kernel_shape": window, "pads": [pad[0], pad[2], pad[1], pad[3]],
             "strides": strides, "dilations": dil}
    expected = onnx_pool(op, x.astype(np.float32 if op != "maxPool2d" else np.float64), attrs)
    got = run_webnn(op, x, window_dimensions=window, padding=pad, strides=strides,
                    dilations=dil)
    assert_close(got, expected.astype(np.float16))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint32", "int64", "uint64"])
def test_max_pool2d_integers(dtype: str) -> None:
    info = np.iinfo(dtype)
    lo, hi = max(int(info.min), -(2**40)), min(int(info.max), 2**40)
    x = RNG.integers(lo, hi, (1, 3, 6, 5), endpoint=True).astype(dtype)
    x[0, 0, 0, 0] = lo  # the lowest value must survive next to (excluded) padding
    attrs = {"kernel_shape": [3, 2], "pads": [1, 0, 1, 1], "strides": [2, 1]}
    if dtype in ("int8", "uint8"):
        expected = onnx_pool("maxPool2d", x, attrs)
    else:
        expected = onnx_pool("maxPool2d", x.astype(np.float64), attrs).astype(dtype)
    got = run_webnn("maxPool2d", x, window_dimensions=[3, 2], padding=[1, 1, 0, 1],
                    strides=[2, 1])
    assert_close(got, expected)


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("op", list(METHOD))
def test_ceil_windows_starting_in_the_padding(op: str, layout: str) -> None:
    # H: (5 - 2 + 0 + 1) / 2 + 1 = 3 -> last window [4, 6) starts on the last real row.
    # W: (6 - 3 + 1 + 2) / 4 + 1 = 2.5 -> ceil 3: the last window [7, 10) starts in the end
    # padding (real columns are 0..5, padded 6..7) and reaches past it; ONNX drops it.
    x = RNG.uniform(0, 1, (1, 2, 5, 6)).astype(np.float32)
    window, pad, strides, dil = [2, 3], [0, 1, 1, 2], [2, 4], [1, 1]
    got = run_webnn(op, to_layout(x, layout), window_dimensions=window, padding=pad,
                    strides=strides, output_shape_rounding="ceil", layout=layout)
    expected = spec_pool(op, x, window, pad, strides, dil, (3, 3))
    assert_close(got, to_layout(expected, layout).astype(np.float32))
    nchw = got if layout == "nchw" else got.transpose(0, 3, 1, 2)
    assert (nchw[:, :, :, 2] == 0).all()  # no real cell in those windows


@pytest.mark.parametrize("op", list(METHOD))
def test_windows_inside_the_padding_yield_zero(op: str) -> None:
    # Padding wider than the window: the first output row sees padding only.
    x = RNG.uniform(1, 2, (1, 1, 3, 3)).astype(np.float32)
    got = run_webnn(op, x, window_dimensions=[2, 2], padding=[3, 0, 0, 0])
    expected = spec_pool(op, x, [2, 2], [3, 0, 0, 0], [1, 1], [1, 1], (5, 2))
    assert_close(got, expected.astype(np.float32))
    assert (got[0, 0, :2] == 0).all() and (got[0, 0, 2:] > 0).all()


def test_average_excludes_padding_and_l2_is_not_a_mean() -> None:
    x = np.full((1, 1, 2, 2), 3.0, np.float32)
    avg = run_webnn("averagePool2d", x, window_dimensions=[2, 2], padding=[1, 1, 1, 1])
    assert (avg == 3.0).all()
    l2 = run_webnn("l2Pool2d", x, window_dimensions=[2, 2])
    assert l2.item() == pytest.approx(math.sqrt(4 * 9.0))
