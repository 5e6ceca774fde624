"""com.microsoft ops that are standard ONNX ops (QuantizeLinear, DequantizeLinear, GatherND,
Pad, Trilu, GridSample, Range, ExpandDims) vs onnxruntime's com.microsoft CPU kernels."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.op_mappings.onnx.contrib.oracle import check_ms, expect_error, ms_model, rng_array

X = rng_array(2, 3, 4, 5, seed=1)


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("per_axis", [False, True])
def test_quantize_linear(qtype: str, per_axis: bool) -> None:
    scale = (np.array([0.02, 0.03, 0.05], np.float32) if per_axis
             else np.array(0.025, np.float32))
    zp = np.array([3, 0, 7] if per_axis else 5, qtype)
    check_ms("QuantizeLinear", [("x", X), ("s", scale), ("z", zp)], constants=("s", "z"),
             rtol=0, atol=0)


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("axis", [1, -1])
def test_dequantize_linear(qtype: str, axis: int) -> None:
    rng = np.random.default_rng(3)
    q = rng.integers(-128 if qtype == "int8" else 0, 128 if qtype == "int8" else 256,
                     size=(2, 3, 4, 5)).astype(qtype)
    n = q.shape[axis]
    scale = rng.uniform(0.01, 0.1, n).astype(np.float32)
    zp = rng.integers(0, 10, n).astype(qtype)
    check_ms("DequantizeLinear", [("q", q), ("s", scale), ("z", zp)], {"axis": axis},
             constants=("s", "z"))


@pytest.mark.parametrize("qtype", ["int16", "uint16", "int4", "uint4"])
def test_dequantize_constant_weights(qtype: str) -> None:
    """16-bit and 4-bit constant weights (onnxruntime's quantizer's contrib forms)."""
    import ml_dtypes  # noqa: F401  (int4 arrays)
    rng = np.random.default_rng(4)
    lo, hi = {"int16": (-3000, 3000), "uint16": (0, 60000), "int4": (-8, 8),
              "uint4": (0, 16)}[qtype]
    w = rng.integers(lo, hi, size=(6, 4)).astype(np.int32)
    dtype: Any = getattr(ml_dtypes, qtype) if "4" in qtype else np.dtype(qtype)
    scale = rng.uniform(0.01, 0.1, 4).astype(np.float32)
    zp = np.array([1, 2, 3, 4], dtype)
    check_ms("DequantizeLinear", [("w", w.astype(dtype)), ("s", scale), ("z", zp)],
             constants=("w", "s", "z"))


def test_quantize_int16_refused() -> None:
    items = [("x", X), ("s", np.array(0.1, np.float32)), ("z", np.array(0, np.int16))]
    expect_error(ms_model("QuantizeLinear", items, constants=("s", "z")),
                 "unsupported_data_type", "output type int16 is not a WebNN quantized type")


def test_gather_nd() -> None:
    idx = np.array([[[0, 1], [1, 2]], [[1, 0], [0, 2]]], np.int64)
    check_ms("GatherND", [("x", X), ("i", idx)], rtol=0, atol=0)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad(mode: str) -> None:
    pads = np.array([0, 1, 1, 2, 0, 0, 2, 1], np.int64)
    items = [("x", X), ("p", pads), ("v", np.array([1.5], np.float32))]
    check_ms("Pad", items if mode == "constant" else items[:2], {"mode": mode},
             constants=("p",), rtol=0, atol=0)


@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [None, -1, 2])
def test_trilu(upper: int, k: int | None) -> None:
    items = [("x", X), ("k", None if k is None else np.array(k, np.int64))]
    check_ms("Trilu", items, {"upper": upper}, constants=("k",), rtol=0, atol=0)


@pytest.mark.parametrize("attrs", [{}, {"mode": "nearest", "padding_mode": "border"},
                                   {"mode": "bicubic", "align_corners": 1}])
def test_grid_sample(attrs: dict[str, Any]) -> None:
    grid = rng_array(2, 3, 4, 2, low=-1.2, high=1.2, seed=5)
    check_ms("GridSample", [("x", X), ("g", grid)], attrs, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype,start,limit,delta", [
    ("float32", 0.5, 7.0, 1.25), ("int32", 10, -3, -4), ("int64", 0, 5, None)])
def test_range(dtype: str, start: float, limit: float, delta: float | None) -> None:
    items = [("a", np.array(start, dtype)), ("b", np.array(limit, dtype)),
             ("d", None if delta is None else np.array(delta, dtype))]
    check_ms("Range", items, constants=("a", "b", "d"), rtol=0, atol=0)


@pytest.mark.parametrize("axis", [0, 2, 4, -1, -5])
def test_expand_dims(axis: int) -> None:
    check_ms("ExpandDims", [("x", X), ("a", np.array(axis, np.int32))], constants=("a",),
             rtol=0, atol=0)


def test_expand_dims_malformed() -> None:
    expect_error(ms_model("ExpandDims", [("x", X), ("a", np.array(5, np.int32))],
                          constants=("a",)),
                 "invalid_model", "axis 5 is outside [-5, 4]")


@pytest.mark.parametrize("pads", [[0, 0, 0, 0], [1, 0, 1, 2]])
@pytest.mark.parametrize("bias", [False, True])
def test_conv_transpose_with_dynamic_pads(pads: list[int], bias: bool) -> None:
    items = [("x", rng_array(1, 3, 5, 4, seed=7)), ("w", rng_array(3, 2, 3, 3, seed=8)),
             ("p", np.array(pads, np.int64)),
             ("b", rng_array(2, seed=9) if bias else None)]
    check_ms("ConvTransposeWithDynamicPads", items, {"strides": [2, 1]},
             constants=("w", "p", "b"), rtol=1e-5, atol=1e-5)


def test_sample_op() -> None:
    check_ms("SampleOp", [("x", X)], rtol=0, atol=0)
