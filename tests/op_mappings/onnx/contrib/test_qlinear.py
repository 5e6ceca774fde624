"""com.microsoft QLinearAdd / Mul / Sigmoid / LeakyRelu / AveragePool / GlobalAveragePool /
Concat / Softmax vs onnxruntime's CPU kernels on random uint8 and int8 inputs.

onnxruntime computes these in float32 (lookup tables, fixed-point sums); the converted graph
dequantizes, runs the float op and quantizes. The outputs must agree within one quantization
step everywhere, and exactly on most elements (`assert_within_one_step` prints
`MAXSTEP <op> <steps> <fraction off>`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper

import converter
from tests.op_mappings.onnx.contrib.oracle import expect_error
from tests.op_mappings.onnx.contrib.quant_oracle import MS, model
from tests.op_mappings.onnx.harness import run_ort
from tests.optional import backend_params

RNG = np.random.default_rng(23)


@pytest.fixture(autouse=True)
def _fresh_rng() -> None:
    """Each test draws the same values whatever order (or xdist worker) it runs in."""
    global RNG
    RNG = np.random.default_rng(23)


def _q(shape: Sequence[int], dtype: str) -> np.ndarray:
    lo, hi = (-128, 127) if dtype == "int8" else (0, 255)
    return RNG.integers(lo, hi, tuple(shape), endpoint=True).astype(dtype)


def _zp(dtype: str, value: int) -> np.ndarray:
    return np.array(value - 128 if dtype == "int8" else value, dtype)


def assert_within_one_step(m: onnx.ModelProto, feeds: dict[str, np.ndarray], label: str,
                           backends: Sequence[str] = ("reference",),
                           max_fraction: float = 0.02) -> None:
    want = run_ort(m, feeds)["y"]
    for backend in backends:
        got = converter.convert(m, target="spec").run(feeds, backend=backend)["y"]
        assert got.dtype == want.dtype and got.shape == want.shape
        diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
        off = float(np.mean(diff != 0)) if diff.size else 0.0
        print(f"MAXSTEP {label}@{backend} {int(diff.max(initial=0))} {off:.4f}")
        assert diff.max(initial=0) <= 1, f"{label}@{backend}: {diff.max()} steps"
        assert off <= max_fraction, f"{label}@{backend}: {off:.2%} of the elements differ"


def _run(op: str, names: list[str], values: dict[str, Any], inputs: Sequence[str],
         attrs: dict[str, Any] | None = None, label: str | None = None,
         backends: Sequence[str] = ("reference",), max_fraction: float = 0.02) -> None:
    node = helper.make_node(op, names, ["y"], domain=MS, **(attrs or {}))
    feeds = {k: np.asarray(v) for k, v in values.items() if k in inputs}
    inits = {k: np.asarray(v) for k, v in values.items() if k not in inputs}
    assert_within_one_step(model([node], feeds, inits), feeds, label or op, backends,
                           max_fraction)


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize(("sa", "sb"), [((2, 3, 8), (2, 3, 8)), ((2, 3, 8), (8,)),
                                        ((4, 1), (1, 5))])
def test_binary(op: str, dtype: str, sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    values = {"a": _q(sa, dtype), "as": np.float32(0.05), "az": _zp(dtype, 120),
              "b": _q(sb, dtype), "bs": np.float32(0.03), "bz": _zp(dtype, 135),
              "cs": np.float32(0.08 if op == "QLinearAdd" else 0.25), "cz": _zp(dtype, 128)}
    _run(op, list(values), values, ("a", "b"), label=f"{op}[{dtype}]")


@pytest.mark.parametrize("backend", backend_params("reference", "onnxruntime", "torch"))
def test_binary_without_zero_points_and_backends(backend: str) -> None:
    """Omitted zero points are 0 (onnxruntime's type inference rejects omitted A/B zero
    points, so its oracle model states them)."""
    values: dict[str, Any] = {"a": _q((3, 16), "uint8"), "as": np.float32(0.02),
                              "b": _q((3, 16), "uint8"),
              "bs": np.float32(0.04), "cs": np.float32(0.1)}
    feeds = {"a": values["a"], "b": values["b"]}
    inits = {k: np.asarray(v) for k, v in values.items() if k not in feeds}
    zeros = {"az": np.zeros((), np.uint8), "bz": np.zeros((), np.uint8)}
    for op in ("QLinearAdd", "QLinearMul"):
        ours = model([helper.make_node(op, ["a", "as", "", "b", "bs", "", "cs"], ["y"],
                                       domain=MS)], feeds, inits)
        oracle = model([helper.make_node(op, ["a", "as", "az", "b", "bs", "bz", "cs"], ["y"],
                                         domain=MS)], feeds, inits | zeros)
        want = run_ort(oracle, feeds)["y"]
        got = converter.convert(ours, target="spec").run(feeds, backend=backend)["y"]
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", backend_params("reference", "onnxruntime", "torch"))
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("op", ["QLinearSigmoid", "QLinearLeakyRelu"])
def test_activations(op: str, dtype: str, backend: str) -> None:
    x = np.arange(256, dtype=np.int64).reshape(4, 64)
    x = (x - 128 if dtype == "int8" else x).astype(dtype)  # every input value once
    values = {"x": x, "xs": np.float32(0.07), "xz": _zp(dtype, 140), "ys": np.float32(0.0041),
              "yz": _zp(dtype, 10)}
    attrs = {"alpha": 0.15} if op == "QLinearLeakyRelu" else {}
    if op == "QLinearLeakyRelu":
        values["ys"] = np.float32(0.05)
        values["yz"] = _zp(dtype, 150)
    _run(op, list(values), values, ("x",), attrs, label=f"{op}[{dtype}]",
         backends=(backend,))


def test_leaky_relu_default_alpha() -> None:
    values = {"x": _q((2, 50), "uint8"), "xs": np.float32(0.1), "xz": np.uint8(128),
              "ys": np.float32(0.1), "yz": np.uint8(100)}
    _run("QLinearLeakyRelu", list(values), values, ("x",))


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [3, 3]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 1},
    {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [3, 2], "auto_pad": "SAME_UPPER"},
    {"kernel_shape": [3, 3], "channels_last": 1},
])
def test_average_pool(dtype: str, attrs: dict[str, Any]) -> None:
    shape = (1, 7, 7, 3) if attrs.get("channels_last") else (1, 3, 7, 7)
    # scales without a short binary ratio: exact .5 ties (decided by float32 rounding in
    # onnxruntime's window sums) are then rare
    values = {"x": _q(shape, dtype), "xs": np.float32(0.0517), "xz": _zp(dtype, 130),
              "ys": np.float32(0.0423), "yz": _zp(dtype, 125)}
    _run("QLinearAveragePool", list(values), values, ("x",), attrs,
         label=f"QLinearAveragePool[{dtype}]", max_fraction=0.05)


def test_average_pool_1d() -> None:
    values = {"x": _q((2, 3, 11), "uint8"), "xs": np.float32(0.0517), "xz": np.uint8(3),
              "ys": np.float32(0.0489), "yz": np.uint8(3)}
    _run("QLinearAveragePool", list(values), values, ("x",), {"kernel_shape": [3]},
         max_fraction=0.05)


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("channels_last", [0, 1])
def test_global_average_pool(dtype: str, channels_last: int) -> None:
    shape = (2, 5, 6, 4) if channels_last else (2, 4, 5, 6)
    values = {"x": _q(shape, dtype), "xs": np.float32(0.05), "xz": _zp(dtype, 128),
              "ys": np.float32(0.02), "yz": _zp(dtype, 120)}
    _run("QLinearGlobalAveragePool", list(values), values, ("x",),
         {"channels_last": channels_last}, label=f"QLinearGlobalAveragePool[{dtype}]",
         max_fraction=0.1)


@pytest.mark.parametrize("backend", backend_params("reference", "onnxruntime", "torch"))
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("axis", [1, -1])
def test_concat(dtype: str, axis: int, backend: str) -> None:
    values = {"ys": np.float32(0.06), "yz": _zp(dtype, 128),
              "a": _q((2, 3, 4), dtype), "as": np.float32(0.05), "az": _zp(dtype, 120),
              "b": _q((2, 3, 4), dtype), "bs": np.float32(0.06), "bz": _zp(dtype, 128),
              "c": _q((2, 3, 4), dtype), "cs": np.float32(0.2), "cz": _zp(dtype, 100)}
    _run("QLinearConcat", list(values), values, ("a", "b", "c"), {"axis": axis},
         label=f"QLinearConcat[{dtype}]", backends=(backend,))


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize(("opset", "axis"), [(13, -1), (13, 1), (12, 1), (11, -1)])
def test_softmax(dtype: str, opset: int, axis: int) -> None:
    values = {"x": _q((2, 4, 10), dtype), "xs": np.float32(0.05), "xz": _zp(dtype, 130),
              "ys": np.float32(1 / 256), "yz": _zp(dtype, 0)}
    _run("QLinearSoftmax", list(values), values, ("x",), {"opset": opset, "axis": axis},
         label=f"QLinearSoftmax[{dtype}]", max_fraction=0.1)


def _bad(op: str, names: list[str], attrs: dict[str, Any] | None = None) -> onnx.ModelProto:
    values: dict[str, np.ndarray] = {"x": np.zeros((1, 2, 4, 4), np.uint8),
                                     "s": np.array(0.1, np.float32), "z": np.array(0, np.uint8),
                                     "s2": np.ones(2, np.float32)}
    node = helper.make_node(op, names, ["y"], domain=MS, **(attrs or {}))
    used = {n for n in names if n}
    return model([node], {"x": values["x"]}, {k: v for k, v in values.items()
                                               if k in used and k != "x"})


@pytest.mark.parametrize(("m", "reason", "fragment"), [
    (_bad("QLinearAdd", ["x", "s", "z"]), "invalid_model", "takes 7 to 8 inputs"),
    (_bad("QLinearSigmoid", ["x", "s2", "z", "s", "z"]), "invalid_model",
     "scale (input 1) must have one element"),
    (_bad("QLinearConcat", ["s", "z", "x", "s"], {"axis": 1}), "invalid_model",
     "(tensor, scale, zero point) triples"),
    (_bad("QLinearConcat", ["s", "z", "x", "s", "z"]), "invalid_model",
     "required attribute 'axis'"),
    (_bad("QLinearSoftmax", ["x", "s", "z", "s", "z"]), "invalid_model",
     "required attribute 'opset'"),
    (_bad("QLinearAveragePool", ["x", "s", "z", "s", "z"]), "invalid_model",
     "'kernel_shape' is missing"),
])
def test_malformed(m: onnx.ModelProto, reason: str, fragment: str) -> None:
    expect_error(m, reason, fragment)
