"""ATAN2 vs LiteRT: all four quadrants, wide magnitude range, signed zeros, infinities,
ranks 1-5, the equal-shape rule; float16 against numpy's arctan2 (LiteRT has no float16 ATAN2 kernel)."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.errors import ConversionFailed
from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import In, S, check, op_model, rand


def model(y: np.ndarray, x: np.ndarray) -> tuple[bytes, list[np.ndarray]]:
    return op_model("ATAN2", [In(y), In(x)], [(y.shape, y.dtype.name)], S.ATan2OptionsT())


def test_quadrants() -> None:
    y, x = rand(4, 50, low=-3, high=3, seed=1), rand(4, 50, low=-3, high=3, seed=2)
    m, feeds = model(y, x)
    check(m, feeds, rtol=2e-6, atol=0)


def test_magnitudes() -> None:
    rng = np.random.default_rng(3)
    y = (rng.choice([-1, 1], 200) * 10.0 ** rng.uniform(-30, 30, 200)).astype(np.float32)
    x = (rng.choice([-1, 1], 200) * 10.0 ** rng.uniform(-30, 30, 200)).astype(np.float32)
    m, feeds = model(y, x)
    check(m, feeds, rtol=2e-6, atol=0)


def test_special_values() -> None:
    inf = np.inf
    vals = [0.0, -0.0, 1.0, -1.0, inf, -inf, 1e-38, -3e38]
    y = np.array([a for a in vals for _ in vals], np.float32)
    x = np.array([b for _ in vals for b in vals], np.float32)
    m, feeds = model(y, x)
    check(m, feeds, rtol=2e-6, atol=0)
    # signed zeros survive
    result = convert_tflite(m)
    out = result.run(dict(zip(result.input_names, feeds, strict=True)))[result.output_names[0]]
    np.testing.assert_array_equal(np.signbit(out), np.signbit(np.arctan2(y, x)))


def test_shapes_must_match() -> None:
    m, _ = model(rand(3, 1), rand(3, 4))
    with pytest.raises(ConversionFailed, match="equal shapes"):
        convert_tflite(m)


@pytest.mark.parametrize("shape", [[7], [2, 3, 4], [1, 2, 2, 3, 2]])
def test_ranks(shape: list[int]) -> None:
    m, feeds = model(rand(*shape, seed=4), rand(*shape, seed=5))
    check(m, feeds, rtol=2e-6, atol=0)


def test_float16_numpy_oracle() -> None:
    y, x = rand(3, 20, low=-4, high=4, seed=6), rand(3, 20, low=-4, high=4, seed=7)
    m, _ = model(y.astype(np.float16), x.astype(np.float16))
    result = convert_tflite(m)
    yh, xh = y.astype(np.float16), x.astype(np.float16)
    out = result.run(dict(zip(result.input_names, [yh, xh], strict=True)))
    got = out[result.output_names[0]]
    assert got.dtype == np.float16
    want = np.arctan2(yh.astype(np.float64), xh.astype(np.float64))
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-3, atol=1e-3)
