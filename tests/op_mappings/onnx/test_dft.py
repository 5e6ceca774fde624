"""ONNX DFT (17, 20) and STFT vs onnxruntime: real/complex input, inverse, onesided,
dft_length (truncate, zero-pad), axis; STFT window/frame_length."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import rand
from tests.op_mappings.onnx.harness_ext import check_node

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
