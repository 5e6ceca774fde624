"""com.microsoft Rfft (CUDA only) vs numpy.fft.rfft in float64."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.contrib.oracle import compare, expect_error, ms_model, rng_array


@pytest.mark.parametrize("shape", [(16,), (2, 3, 10), (4, 7)])
def test_rfft(shape: tuple[int, ...]) -> None:
    x = rng_array(*shape, seed=1)
    spec = np.fft.rfft(x.astype(np.float64), axis=-1)
    want = np.stack([spec.real, spec.imag], axis=-1).astype(np.float32)
    compare(ms_model("Rfft", [("x", x)]), {"x": x}, {"y": want}, "Rfft", 1e-4, 1e-4)


def test_rfft_refused_forms() -> None:
    expect_error(ms_model("Rfft", [("x", rng_array(2, 8))], {"normalized": 1}),
                 "unsupported_attribute", "signal_ndim=1, onesided=1, normalized=0")
