"""ONNX Mod (fmod 0 and 1, integer and float types) vs onnxruntime, and vs numpy.mod where
onnxruntime lacks opset 28."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check_node, rand

RNG = np.random.default_rng(0)


def _run(op: str, items: list[tuple[str, np.ndarray]], attrs: dict | None = None,
         opset: int = 28) -> np.ndarray:
    import converter
    from tests.op_mappings.onnx.harness import node_model

    model = node_model(op, items, attrs, opset=opset)
    return converter.convert(model).run(dict(items))["y"]


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8"])
@pytest.mark.parametrize("fmod", [0, 1])
def test_mod_integers(dtype: str, fmod: int) -> None:
    a = RNG.integers(-50, 50, size=(3, 4)).astype(dtype)
    b = RNG.integers(1, 9, size=(4,)).astype(dtype) * np.array([1, -1, 1, -1], dtype)
    check_node("Mod", [("a", a), ("b", b)], {"fmod": fmod}, opset=13)


def test_mod_unsigned_and_float() -> None:
    a = RNG.integers(0, 200, size=(3, 4)).astype(np.uint8)
    b = RNG.integers(1, 9, size=(3, 4)).astype(np.uint8)
    check_node("Mod", [("a", a), ("b", b)], opset=13)
    check_node("Mod", [("a", rand(3, 4, low=-9, high=9)), ("b", rand(4, low=0.5, high=3))],
               {"fmod": 1}, opset=13, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_mod_float_fmod0(dtype: str) -> None:
    """fmod=0 on floats (opset 28; onnxruntime rejects it): numpy.mod in float64 is the
    oracle, including infinities, zeros of both signs, NaN and a zero divisor."""
    a = rand(4, 6, low=-20, high=20, seed=3).astype(dtype)
    b = rand(6, low=0.5, high=7, seed=4).astype(dtype) * np.array([1, -1] * 3, dtype)
    got = _run("Mod", [("a", a), ("b", b)], {"fmod": 0})
    want = np.mod(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(got, want.astype(dtype), rtol=1e-3, atol=1e-2 if dtype ==
                               "float16" else 1e-5)
    special_a = np.array([0, -0.0, -3, 3, -1, 1, np.inf, 1, np.nan, 1, 5], dtype)
    special_b = np.array([-2, 2, np.inf, np.inf, -np.inf, -np.inf, 2, 0, 2, np.nan, -5], dtype)
    got = _run("Mod", [("a", special_a), ("b", special_b)], {"fmod": 0})
    with np.errstate(invalid="ignore", divide="ignore"):
        want = np.mod(special_a.astype(np.float64), special_b.astype(np.float64))
    np.testing.assert_array_equal(got, want.astype(dtype))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_fmod1_infinite_divisor() -> None:
    a = np.array([3.5, -2.0, 0.25], np.float32)
    b = np.array([np.inf, -np.inf, np.inf], np.float32)
    check_node("Mod", [("a", a), ("b", b)], {"fmod": 1}, opset=13)
