"""ONNX Sinh, Cosh, Asinh, Acosh, Atanh, Atan, Asin, Acos vs onnxruntime, plus a float64
numpy oracle over dense grids (the decompositions' accuracy claims: a few float32 ulps)."""

from __future__ import annotations

import numpy as np
import pytest

import converter
from tests.op_mappings.onnx.harness import check, make_model

# op -> (numpy float64 oracle, domain lo, hi)
OPS = {
    "Sinh": (np.sinh, -10.0, 10.0), "Cosh": (np.cosh, -10.0, 10.0),
    "Asinh": (np.arcsinh, -50.0, 50.0), "Acosh": (np.arccosh, 1.0, 50.0),
    "Atanh": (np.arctanh, -0.999, 0.999), "Atan": (np.arctan, -50.0, 50.0),
    "Asin": (np.arcsin, -1.0, 1.0), "Acos": (np.arccos, -1.0, 1.0),
}


def _grid(lo: float, hi: float) -> np.ndarray:
    """A dense grid plus tiny magnitudes and the domain ends."""
    x = np.linspace(lo, hi, 4001)
    tiny = np.array([1e-30, 1e-12, 1e-7, 1e-4, 3e-3, 0.2679, 0.268, 0.5, 0.99, 1.0])
    extra = np.concatenate([tiny, -tiny, [lo, hi, 0.0]])
    extra = extra[(extra >= lo) & (extra <= hi)]
    return np.concatenate([x, extra]).astype(np.float32)


@pytest.mark.parametrize("op", sorted(OPS))
def test_vs_onnxruntime(op: str) -> None:
    _, lo, hi = OPS[op]
    rng = np.random.default_rng(1)
    x = rng.uniform(lo, hi, size=(3, 4, 5)).astype(np.float32)
    check(op, {"x": x}, opset=22, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", sorted(OPS))
def test_accuracy_vs_float64(op: str) -> None:
    """Max relative error (plus 1e-7 absolute slack near zero results) over a dense grid."""
    fn, lo, hi = OPS[op]
    x = _grid(lo, hi)
    model = make_model(op, {"x": x}, opset=22)
    got = converter.convert(model).run({"x": x})["y"].astype(np.float64)
    want = fn(x.astype(np.float64))
    err = np.abs(got - want) / (np.abs(want) + 1e-7)
    assert np.all(np.isfinite(got)), x[~np.isfinite(got)]
    assert err.max() < 2e-6, (op, x[np.argmax(err)], err.max())


def test_out_of_domain_and_specials() -> None:
    for op, x, want in [("Asin", [2.0, -1.5], [np.nan, np.nan]),
                        ("Acos", [1.5], [np.nan]),
                        ("Acosh", [0.5], [np.nan]),
                        ("Atanh", [1.0, -1.0, 2.0], [np.inf, -np.inf, np.nan]),
                        ("Atan", [np.inf, -np.inf, 0.0], [np.pi / 2, -np.pi / 2, 0.0]),
                        ("Asinh", [1e30, -1e30], [np.arcsinh(1e30), -np.arcsinh(1e30)]),
                        ("Acosh", [1e30], [np.arccosh(1e30)])]:
        arr = np.array(x, np.float32)
        got = converter.convert(make_model(op, {"x": arr}, opset=22)).run({"x": arr})["y"]
        np.testing.assert_allclose(got, np.array(want, np.float32), rtol=1e-6, err_msg=op)


@pytest.mark.parametrize("op", ["Sinh", "Atan", "Acos"])
def test_float16(op: str) -> None:
    _, lo, hi = OPS[op]
    x = np.linspace(max(lo, -5), min(hi, 5), 60, dtype=np.float16).reshape(3, 20)
    check(op, {"x": x}, opset=22)
