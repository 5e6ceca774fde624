"""ONNX DFT (17, 20) and STFT vs onnxruntime: real/complex input, inverse, onesided,
dft_length (truncate, zero-pad), axis; STFT window/frame_length; inverse + onesided (irfft)
vs onnxruntime and numpy's float64 irfft."""

from __future__ import annotations

import numpy as np
import pytest

import converter
from tests.op_mappings.onnx.harness import check_node, node_model, rand

TOL = {"rtol": 1e-4, "atol": 1e-4}


@pytest.mark.parametrize("complex_in", [False, True])
@pytest.mark.parametrize("inverse", [0, 1])
@pytest.mark.parametrize("onesided", [0, 1])
@pytest.mark.parametrize("length", [None, 6, 11])
def test_dft17(complex_in: bool, inverse: int, onesided: int, length: int | None) -> None:
    if onesided and (inverse or complex_in):
        pytest.skip("onesided applies to real forward transforms")
    x = rand(2, 8, 2 if complex_in else 1, seed=1)
    ln = None if length is None else np.array(length, np.int64)
    check_node("DFT", [("x", x), ("n", ln)], {"inverse": inverse, "onesided": onesided},
               opset=17, constants=("n",), **TOL)


@pytest.mark.parametrize("axis", [1, 2, -2])
def test_dft20_axis(axis: int) -> None:
    x = rand(2, 5, 6, 2, seed=2)
    check_node("DFT", [("x", x), ("n", None), ("axis", np.array(axis, np.int64))], opset=20,
               constants=("axis",), **TOL)


def test_dft17_axis2() -> None:
    check_node("DFT", [("x", rand(2, 3, 7, 1, seed=3))], {"axis": 2}, opset=17, **TOL)


@pytest.mark.parametrize("window", [True, False])
@pytest.mark.parametrize("onesided", [0, 1])
def test_stft(window: bool, onesided: int) -> None:
    x = rand(2, 20, 1, seed=4)
    items = [("x", x), ("step", np.array(3, np.int64)),
             ("w", np.hanning(8).astype(np.float32) if window else None),
             ("len", None if window else np.array(8, np.int64))]
    check_node("STFT", items, {"onesided": onesided}, opset=17,
               constants=("step", "len"), **TOL)


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("length", [None, 8])
def test_irfft_vs_onnxruntime(opset: int, length: int | None) -> None:
    """inverse + onesided on a complex one-sided spectrum of L//2 + 1 bins -> real signal."""
    x = rand(2, 5, 3, 2, seed=5)
    items = [("x", x), ("n", None if length is None else np.array(length, np.int64))]
    attrs = {"inverse": 1, "onesided": 1}
    if opset == 17:
        attrs["axis"] = 1
    else:
        items.append(("axis", np.array(1, np.int64)))
    check_node("DFT", items, attrs, opset=opset, constants=("n", "axis"), **TOL)


@pytest.mark.parametrize("length", [None, 7, 8, 3, 12])
@pytest.mark.parametrize("complex_in", [True, False])
def test_irfft_vs_numpy(length: int | None, complex_in: bool) -> None:
    """The ONNX reference semantics (numpy irfft in float64): bins beyond L//2 + 1 ignored,
    missing bins zero, imaginary parts of the DC / Nyquist bins ignored. onnxruntime differs
    for odd or truncating lengths and rejects real input, so the oracle is numpy."""
    x = rand(2, 5, 3, 2 if complex_in else 1, seed=5)
    items = [("x", x), ("n", None if length is None else np.array(length, np.int64))]
    model = node_model("DFT", items, {"inverse": 1, "onesided": 1, "axis": 1}, opset=17,
                       constants=("n",))
    got = converter.convert(model).run({"x": x})["y"]
    spec = x[..., 0].astype(np.float64) + (1j * x[..., 1] if complex_in else 0)
    want = np.fft.irfft(spec, n=length, axis=1)[..., None]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
