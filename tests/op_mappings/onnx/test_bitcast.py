"""ONNX BitCast (opset 26) against numpy's `view` (the ONNX definition; onnxruntime has no
opset 26 here): every float32 class (normal, subnormal, ±0, ±inf, powers of two and their
neighbours, random bit patterns) and integer reinterpretations."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

import converter
from converter.core.errors import ConversionFailed
from tests.op_mappings.onnx.harness import node_model

TO = {"int32": TensorProto.INT32, "uint32": TensorProto.UINT32, "float32": TensorProto.FLOAT,
      "int8": TensorProto.INT8, "uint8": TensorProto.UINT8, "int64": TensorProto.INT64}


def _run(x: np.ndarray, to: str) -> np.ndarray:
    model = node_model("BitCast", [("x", x)], {"to": TO[to]}, opset=26)
    return converter.convert(model, target="spec").run({"x": x})["y"]


def _floats() -> np.ndarray:
    rng = np.random.default_rng(0)
    pows = np.ldexp(np.float32(1.0), np.arange(-149, 128)).astype(np.float32)
    near = np.concatenate([np.nextafter(pows, np.float32(0)), np.nextafter(pows, np.float32(
        np.inf))])
    pats = rng.integers(0, 1 << 32, size=4000, dtype=np.uint64).astype(np.uint32).view(
        np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, 1.0, -2.5, 3.75, 1.17549435e-38,
                        1.4e-45, 3.4028235e38], np.float32)
    out = np.concatenate([pows, -pows, near, pats, special]).astype(np.float32)
    return out[~np.isnan(out)]


@pytest.mark.parametrize("to", ["int32", "uint32"])
def test_float32_to_int(to: str) -> None:
    x = _floats()
    np.testing.assert_array_equal(_run(x, to), x.view(to))


def test_float32_nan_is_canonical() -> None:
    x = np.array([np.nan, -np.nan, 1.0], np.float32)
    np.testing.assert_array_equal(_run(x, "int32"), np.array([0x7FC00000, 0x7FC00000,
                                                              0x3F800000], np.int32))


@pytest.mark.parametrize("src", ["int32", "uint32"])
def test_int_to_float32(src: str) -> None:
    want = _floats()
    x = want.view(src)
    got = _run(x, "float32")
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    nan_patterns = np.array([0x7F800001, 0xFFC00000, 0x7FFFFFFF], np.uint32).view(src)
    assert np.isnan(_run(nan_patterns, "float32")).all()


@pytest.mark.parametrize("src,to", [("int8", "uint8"), ("uint8", "int8"), ("int32", "uint32"),
                                    ("uint32", "int32")])
def test_integers(src: str, to: str) -> None:
    info = np.iinfo(src)
    x = np.array([info.min, info.min + 1, -1 if info.min else 1, 0, 1, info.max - 1,
                  info.max], dtype=src)
    got = _run(x, to)
    assert got.dtype == np.dtype(to)
    np.testing.assert_array_equal(got, x.view(to))


def test_bool_to_uint8() -> None:
    x = np.array([True, False, True], bool)
    np.testing.assert_array_equal(_run(x, "uint8"), np.array([1, 0, 1], np.uint8))


def test_unsupported_width() -> None:
    with pytest.raises(ConversionFailed, match="BitCast from int32 to int64"):
        _run(np.array([1, 2], np.int32), "int64")
