"""Reference kernels conv2d and convTranspose2d against onnxruntime one-node models (Conv and
ConvTranspose, opset 11), for what the WPT cases do not cover: nhwc input, every filter
layout, groups, depthwise (with and without a channel multiplier), dilations, asymmetric
padding, 1x1 strided convolutions, batches, bias, convTranspose outputPadding/outputSizes and
float16.

onnxruntime only implements these ops for float32/float16, so float32 cases compare with a
float32 onnxruntime run at float32 tolerances (the reference accumulates in float64 and
rounds once), and float16 cases compare with the float32 onnxruntime result rounded to float16.
WebNN layouts are produced by transposing the NCHW / OIHW / IOHW test data, so onnxruntime
always sees its native layouts.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import converter.runtimes.reference.kernels.conv as conv_kernels
from converter.core.webnn import ML, MLGraphBuilder
from tests.converter.runtimes.reference.kernels import oracle

RNG = np.random.default_rng(20260627)

# From OIHW (conv2d) or IOHW (convTranspose2d) to each WebNN filter layout.
CONV_FILTER = {"oihw": (0, 1, 2, 3), "hwio": (2, 3, 1, 0), "ohwi": (0, 2, 3, 1),
               "ihwo": (1, 2, 3, 0)}
TRANSPOSED_FILTER = {"iohw": (0, 1, 2, 3), "hwoi": (2, 3, 1, 0), "ohwi": (1, 2, 3, 0)}


def onnx_run(op: str, inputs: list[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    """The one-node ONNX (opset 11) oracle."""
    return oracle.onnx_run(op, inputs, attrs, 11)


def to_layout(nchw: np.ndarray, layout: str) -> np.ndarray:
    return nchw if layout == "nchw" else np.ascontiguousarray(nchw.transpose(0, 2, 3, 1))


def run_webnn(method: str, x: np.ndarray, w: np.ndarray, bias: np.ndarray | None,
              constant_filter: bool, **options: Any) -> np.ndarray:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    xi = b.input("x", list(x.shape), x.dtype.name)
    feeds = {"x": x}
    if constant_filter:
        wi = b.constant(w)
    else:
        wi = b.input("w", list(w.shape), w.dtype.name)
        feeds["w"] = w
    if bias is not None:
        options["bias"] = b.constant(bias)
    y = getattr(b, method)(xi, wi, **options)
    graph = b.build({"y": y})
    first = ctx.compute(graph, feeds)["y"]
    second = ctx.compute(graph, feeds)["y"]  # cached filter preparation must not change it
    np.testing.assert_array_equal(first, second)
    assert first.dtype == x.dtype and list(first.shape) == list(y.shape)
    return first


def expected_from(onnx_op: str, x: np.ndarray, w: np.ndarray, bias: np.ndarray | None,
                  attrs: dict[str, Any]) -> np.ndarray:
    """onnxruntime in float32 (float16 data is widened first and the result rounded back)."""
    inputs = [x.astype(np.float32), w.astype(np.float32)]
    if bias is not None:
        inputs.append(bias.astype(np.float32))
    return onnx_run(onnx_op, inputs, attrs).astype(x.dtype)


def assert_close(got: np.ndarray, expected: np.ndarray) -> None:
    if got.dtype == np.float16:
        np.testing.assert_allclose(got.astype(np.float32), expected.astype(np.float32),
                                   rtol=2e-3, atol=2e-3)
    else:
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-5)


# (N, C, H, W), O, (kh, kw), groups, padding [t, b, l, r], strides, dilations, bias
CONV_CASES = {
    "plain": ((1, 3, 7, 6), 4, (3, 3), 1, [0, 0, 0, 0], [1, 1], [1, 1], False),
    "asym-padding-bias": ((2, 3, 6, 7), 5, (3, 2), 1, [1, 0, 2, 1], [1, 1], [1, 1], True),
    "strides-dilations": ((1, 2, 11, 9), 3, (3, 3), 1, [1, 2, 0, 1], [2, 3], [2, 1], True),
    "groups": ((2, 6, 5, 5), 4, (2, 3), 2, [0, 1, 1, 0], [1, 2], [1, 1], True),
    "depthwise": ((2, 4, 6, 6), 4, (3, 3), 4, [1, 1, 1, 1], [2, 1], [1, 2], True),
    "depthwise-multiplier": ((1, 3, 5, 6), 6, (2, 2), 3, [0, 1, 1, 0], [1, 1], [1, 1], True),
    "1x1": ((2, 5, 4, 3), 3, (1, 1), 1, [0, 0, 0, 0], [1, 1], [1, 1], True),
    "1x1-strided-groups": ((1, 4, 7, 6), 6, (1, 1), 2, [0, 0, 0, 0], [2, 3], [1, 1], False),
    "1x1-padded": ((1, 2, 3, 3), 2, (1, 1), 1, [1, 0, 0, 1], [1, 1], [1, 1], False),
    "kernel-wider-than-input": ((1, 2, 3, 2), 2, (2, 4), 1, [0, 0, 1, 1], [1, 1], [1, 1], False),
}


def conv_case(name: str, dtype: type = np.float32
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, dict[str, Any]]:
    shape, o, (kh, kw), groups, pad, strides, dil, with_bias = CONV_CASES[name]
    x = RNG.uniform(-1, 1, shape).astype(dtype)
    w = RNG.uniform(-1, 1, (o, shape[1] // groups, kh, kw)).astype(dtype)
    bias = RNG.uniform(-1, 1, o).astype(dtype) if with_bias else None
    attrs = {"kernel_shape": [kh, kw], "pads": [pad[0], pad[2], pad[1], pad[3]],
             "strides": strides, "dilations": dil, "group": groups}
    return x, w, bias, attrs


@pytest.mark.parametrize("input_layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("filter_layout", list(CONV_FILTER))
@pytest.mark.parametrize("name", list(CONV_CASES))
def test_conv2d_matches_onnxruntime(name: str, filter_layout: str, input_layout: str) -> None:
    x, w, bias, attrs = conv_case(name)
    expected = expected_from("Conv", x, w, bias, attrs)
    _, _, groups, pad, strides, dil = CONV_CASES[name][1:7]
    got = run_webnn("conv2d", to_layout(x, input_layout),
                    np.ascontiguousarray(w.transpose(CONV_FILTER[filter_layout])), bias,
                    constant_filter=filter_layout != "hwio", padding=pad, strides=strides,
                    dilations=dil, groups=groups, input_layout=input_layout,
                    filter_layout=filter_layout)
    assert_close(got, to_layout(expected, input_layout))


@pytest.mark.parametrize("name", ["asym-padding-bias", "depthwise", "1x1-strided-groups"])
def test_conv2d_float16(name: str) -> None:
    x, w, bias, attrs = conv_case(name, np.float16)
    _, _, groups, pad, strides, dil = CONV_CASES[name][1:7]
    got = run_webnn("conv2d", x, w, bias, constant_filter=True, padding=pad, strides=strides,
                    dilations=dil, groups=groups)
    assert_close(got, expected_from("Conv", x, w, bias, attrs))


def test_conv2d_accumulates_in_float64() -> None:
    # 1 + 2^-24 - 1 cancels exactly only when the sum is carried in more than float32.
    x = np.array([1.0, 2.0**-24, -1.0], np.float32).reshape(1, 3, 1, 1)
    w = np.ones((1, 3, 1, 1), np.float32)
    got = run_webnn("conv2d", x, w, None, constant_filter=True)
    assert got.item() == np.float32(2.0**-24)


def test_one_constant_filter_shared_by_two_layouts() -> None:
    # The per-constant filter cache is keyed by layout: the same [2, 2, 3, 3] constant read as
    # oihw and as ihwo gives two different convolutions.
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    w = RNG.uniform(-1, 1, (2, 2, 3, 3)).astype(np.float32)
    x = RNG.uniform(-1, 1, (1, 2, 4, 4)).astype(np.float32)
    xi, wi = b.input("x", [1, 2, 4, 4], "float32"), b.constant(w)
    y1 = b.conv2d(xi, wi, padding=[1, 1, 1, 1])
    y2 = b.conv2d(xi, wi, filter_layout="ihwo", padding=[0, 1, 1, 1])
    out = ctx.compute(b.build({"y1": y1, "y2": y2}), {"x": x})
    attrs = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    assert_close(out["y1"], onnx_run("Conv", [x, w], attrs))
    w2 = np.ascontiguousarray(w.transpose(3, 0, 1, 2))  # ihwo -> oihw
    attrs = {"kernel_shape": [2, 3], "pads": [0, 1, 1, 1]}
    assert_close(out["y2"], onnx_run("Conv", [x, w2], attrs))


# (N, C, H, W), O, (kh, kw), groups, padding, strides, dilations, outputPadding, outputSizes,
# bias
TRANSPOSED_CASES = {
    "plain": ((1, 2, 3, 4), 3, (3, 3), 1, [0, 0, 0, 0], [1, 1], [1, 1], None, None, False),
    "strides-output-padding": ((2, 3, 3, 2), 2, (3, 2), 1, [1, 0, 0, 1], [3, 2], [1, 1],
                               [2, 1], None, True),
    "output-sizes": ((1, 2, 4, 3), 4, (2, 3), 1, [1, 1, 0, 2], [2, 3], [1, 1], None, [7, 8],
                     True),
    "dilations-padding": ((1, 2, 4, 4), 2, (3, 2), 1, [2, 1, 1, 0], [2, 2], [2, 3], [1, 0],
                          None, False),
    "groups": ((2, 4, 3, 3), 6, (2, 2), 2, [0, 1, 1, 0], [2, 1], [1, 1], [1, 0], None, True),
    "depthwise": ((1, 3, 4, 3), 3, (3, 3), 3, [1, 1, 1, 1], [2, 2], [1, 1], None, [8, 6],
                  True),
    "1x1": ((1, 3, 3, 3), 2, (1, 1), 1, [0, 0, 0, 0], [1, 1], [1, 1], None, None, False),
}


def transposed_case(name: str, dtype: type = np.float32
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, dict[str, Any],
                               dict[str, Any]]:
    (shape, o, (kh, kw), groups, pad, strides, dil, out_pad, out_sizes,
     with_bias) = TRANSPOSED_CASES[name]
    x = RNG.uniform(-1, 1, shape).astype(dtype)
    w = RNG.uniform(-1, 1, (shape[1], o // groups, kh, kw)).astype(dtype)
    bias = RNG.uniform(-1, 1, o).astype(dtype) if with_bias else None
    onnx_out_pad = out_pad or [0, 0]
    if out_sizes is not None:  # outputSizes = calc + ONNX output_padding
        calc = [(shape[2 + i] - 1) * strides[i] + (k - 1) * dil[i] + 1 - pad[2 * i]
                - pad[2 * i + 1] for i, k in enumerate((kh, kw))]
        onnx_out_pad = [s - c for s, c in zip(out_sizes, calc, strict=True)]
    attrs = {"kernel_shape": [kh, kw], "pads": [pad[0], pad[2], pad[1], pad[3]],
             "strides": strides, "dilations": dil, "group": groups,
             "output_padding": onnx_out_pad}
    options: dict[str, Any] = {"padding": pad, "strides": strides, "dilations": dil,
                               "groups": groups}
    if out_pad is not None:
        options["output_padding"] = out_pad
    if out_sizes is not None:
        options["output_sizes"] = out_sizes
    return x, w, bias, attrs, options


@pytest.mark.parametrize("input_layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("filter_layout", list(TRANSPOSED_FILTER))
@pytest.mark.parametrize("name", list(TRANSPOSED_CASES))
def test_conv_transpose2d_matches_onnxruntime(name: str, filter_layout: str,
                                              input_layout: str) -> None:
    x, w, bias, attrs, options = transposed_case(name)
    expected = expected_from("ConvTranspose", x, w, bias, attrs)
    got = run_webnn("conv_transpose2d", to_layout(x, input_layout),
                    np.ascontiguousarray(w.transpose(TRANSPOSED_FILTER[filter_layout])), bias,
                    constant_filter=filter_layout != "hwoi", input_layout=input_layout,
                    filter_layout=filter_layout, **options)
    assert_close(got, to_layout(expected, input_layout))


@pytest.mark.parametrize("name", ["strides-output-padding", "groups", "output-sizes"])
def test_conv_transpose2d_float16(name: str) -> None:
    x, w, bias, attrs, options = transposed_case(name, np.float16)
    got = run_webnn("conv_transpose2d", x, w, bias, constant_filter=False, **options)
    assert_close(got, expected_from("ConvTranspose", x, w, bias, attrs))


@pytest.mark.parametrize("name", ["asym-padding-bias", "strides-dilations", "groups"])
def test_conv2d_im2col_in_row_blocks(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    # A tiny im2col budget forces one block per output row (or a few rows).
    monkeypatch.setattr(conv_kernels, "_IM2COL_MAX_ELEMENTS", 100)
    x, w, bias, attrs = conv_case(name)
    _, _, groups, pad, strides, dil = CONV_CASES[name][1:7]
    got = run_webnn("conv2d", x, w, bias, constant_filter=True, padding=pad, strides=strides,
                    dilations=dil, groups=groups)
    assert_close(got, expected_from("Conv", x, w, bias, attrs))


def test_prepared_filters_are_cached_per_constant_and_released_with_it() -> None:
    import gc
    import weakref

    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    w = b.constant(RNG.uniform(-1, 1, (2, 3, 3, 3)).astype(np.float32))
    graph = b.build({"y": b.conv2d(b.input("x", [1, 3, 4, 4], "float32"), w)})
    ctx.compute(graph, {"x": np.ones((1, 3, 4, 4), np.float32)})
    assert list(conv_kernels._PREPARED.get(w, {})) == [("conv2d", "oihw", 1)]
    ref = weakref.ref(w)
    del graph, b, w
    gc.collect()
    assert ref() is None  # the cache holds no strong reference to the constant
