"""com.microsoft DynamicQuantizeMatMul and MatMulIntegerToFloat vs onnxruntime's CPU kernels:
int8/uint8 B, per-tensor and per-column scales and zero points, bias, batched A, float16
MatMulIntegerToFloat, constant and runtime B, and the reference / onnxruntime / torch
backends."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper

from tests.op_mappings.onnx.contrib.oracle import expect_error
from tests.op_mappings.onnx.contrib.quant_oracle import MS, model, run_compare
from tests.op_mappings.onnx.harness import run_ort
from tests.optional import backend_params

RNG = np.random.default_rng(17)


@pytest.fixture(autouse=True)
def _fresh_rng() -> None:
    """Each test draws the same values whatever order (or xdist worker) it runs in."""
    global RNG
    RNG = np.random.default_rng(17)


def _ints(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    lo, hi = (-128, 127) if dtype == "int8" else (0, 255)
    return RNG.integers(lo, hi, shape, endpoint=True).astype(dtype)


def _run(op: str, names: list[str], values: dict[str, Any], consts: tuple[str, ...],
         backends: tuple[str, ...] = ("reference",), rtol: float = 1e-6,
         atol: float = 1e-5) -> None:
    node = helper.make_node(op, names, ["y"], domain=MS)
    feeds = {k: v for k, v in values.items() if k not in consts}
    inits = {k: v for k, v in values.items() if k in consts}
    m = model([node], feeds, inits)
    run_compare(m, feeds, run_ort(m, feeds), op, rtol, atol, backends)


@pytest.mark.parametrize("btype", ["int8", "uint8"])
@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("zp", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_dynamic_quantize_matmul(btype: str, per_column: bool, zp: bool, bias: bool) -> None:
    k, n = 48, 5
    pshape: tuple[int, ...] = (n,) if per_column else ()
    values = {"A": RNG.standard_normal((3, k)).astype(np.float32), "B": _ints((k, n), btype),
              "bs": RNG.uniform(0.005, 0.05, pshape).astype(np.float32)}
    names = ["A", "B", "bs", "", ""]
    if zp:
        values["bz"] = _ints(pshape, btype) // 4
        names[3] = "bz"
    if bias:
        values["bias"] = RNG.standard_normal(n).astype(np.float32)
        names[4] = "bias"
    while names[-1] == "":
        names.pop()
    _run("DynamicQuantizeMatMul", names, values, ("B", "bs", "bz", "bias"))


@pytest.mark.parametrize("backend", backend_params("reference", "onnxruntime", "torch"))
def test_dynamic_quantize_matmul_batched_runtime_b_and_backends(backend: str) -> None:
    values: dict[str, Any] = {  # A all positive: its zero point is 0
              "A": RNG.uniform(0.1, 4, (2, 3, 40)).astype(np.float32),
              "B": _ints((40, 6), "int8"), "bs": np.float32(0.02),
              "bz": np.int8(3), "bias": RNG.standard_normal(6).astype(np.float32)}
    _run("DynamicQuantizeMatMul", ["A", "B", "bs", "bz", "bias"], values, ("bs", "bz"),
         backends=(backend,))


@pytest.mark.parametrize(("atype", "btype"), [("int8", "int8"), ("uint8", "int8"),
                                              ("uint8", "uint8")])
@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_matmul_integer_to_float(atype: str, btype: str, per_column: bool, dtype: str) -> None:
    k, n = 32, 4
    pshape: tuple[int, ...] = (n,) if per_column else ()
    values = {"A": _ints((2, 3, k), atype), "B": _ints((k, n), btype),
              "as": np.array(0.03, dtype), "bs": RNG.uniform(0.001, 0.01, pshape).astype(dtype),
              "az": np.array(5, atype), "bz": _ints(pshape, btype) // 8,
              "bias": RNG.standard_normal(n).astype(dtype)}
    tol = 1e-3 if dtype == "float16" else 1e-5
    _run("MatMulIntegerToFloat", ["A", "B", "as", "bs", "az", "bz", "bias"], values,
         ("B", "as", "bs", "az", "bz", "bias"), rtol=tol, atol=tol)


def test_matmul_integer_to_float_int8_a_uint8_b() -> None:
    """onnxruntime has no kernel for int8 A with uint8 B: the float64 formula is the oracle."""
    a, b = _ints((3, 24), "int8"), _ints((24, 4), "uint8")
    values = {"A": a, "B": b, "as": np.float32(0.03), "bs": np.float32(0.002),
              "az": np.int8(-3), "bz": np.uint8(7)}
    node = helper.make_node("MatMulIntegerToFloat", list(values), ["y"], domain=MS)
    m = model([node], {"A": a}, {k: np.asarray(v) for k, v in values.items() if k != "A"})
    acc = (a.astype(np.float64) + 3) @ (b.astype(np.float64) - 7)
    want = (acc * np.float32(np.float32(0.03) * np.float32(0.002))).astype(np.float32)
    run_compare(m, {"A": a}, {"y": want}, "MatMulIntegerToFloat(int8, uint8)", 1e-6, 1e-6)


@pytest.mark.parametrize("backend", backend_params("reference", "onnxruntime", "torch"))
def test_matmul_integer_to_float_optional_inputs_and_backends(backend: str) -> None:
    values = {"A": _ints((4, 16), "uint8"), "B": _ints((16, 3), "int8"),
              "as": np.array(0.1, np.float32), "bs": np.array(0.05, np.float32)}
    _run("MatMulIntegerToFloat", ["A", "B", "as", "bs"], values, ("as", "bs"),
         backends=(backend,))


def _bad(op: str, names: list[str], values: dict[str, Any]) -> onnx.ModelProto:
    node = helper.make_node(op, names, ["y"], domain=MS)
    return model([node], {"A": values.pop("A")}, values)


A32 = np.zeros((2, 8), np.float32)
B8 = np.zeros((8, 3), np.int8)


@pytest.mark.parametrize(("m", "reason", "fragment"), [
    (_bad("DynamicQuantizeMatMul", ["A", "B"], {"A": A32, "B": B8}), "invalid_model",
     "takes 3 to 5 inputs"),
    (_bad("DynamicQuantizeMatMul", ["A", "B", "s"], {"A": A32, "B": B8,
                                                     "s": np.ones(4, np.float32)}),
     "invalid_model", "a scalar or [3] (per column)"),
    (_bad("DynamicQuantizeMatMul", ["A", "B", "s"], {"A": np.zeros(8, np.float32), "B": B8,
                                                     "s": np.float32(1)}),
     "unsupported_attribute", "1-D operands"),
    (_bad("MatMulIntegerToFloat", ["A", "B", "s", "s2"], {
        "A": np.zeros((2, 8), np.uint8), "B": B8, "s": np.ones(2, np.float32),
        "s2": np.float32(1)}), "unsupported_attribute", "a_scale of shape [2]"),
    (_bad("MatMulIntegerToFloat", ["A", "B", "s", "s2", "z"], {
        "A": np.zeros((2, 8), np.uint8), "B": B8, "s": np.float32(1), "s2": np.float32(1),
        "z": np.int8(0)}), "invalid_model", "a_zero_point has data type int8"),
])
def test_malformed(m: onnx.ModelProto, reason: str, fragment: str) -> None:
    expect_error(m, reason, fragment)
