"""com.microsoft QGemm vs onnxruntime's CPU kernel: uint8/int8 A and B, transA/transB,
alpha, per-tensor and per-column B parameters, the int32 C, float and quantized outputs,
constant and runtime B, on the reference / onnxruntime / torch backends."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper

import converter
from tests.op_mappings.onnx.contrib.oracle import expect_error
from tests.op_mappings.onnx.contrib.quant_oracle import MS, model, run_compare
from tests.op_mappings.onnx.harness import run_ort
from tests.optional import backend_params

RNG = np.random.default_rng(29)


@pytest.fixture(autouse=True)
def _fresh_rng() -> None:
    """Each test draws the same values whatever order (or xdist worker) it runs in."""
    global RNG
    RNG = np.random.default_rng(29)


def _q(shape: tuple[int, ...], dtype: str, lo: int | None = None, hi: int | None = None
       ) -> np.ndarray:
    lo_t, hi_t = (-128, 127) if dtype == "int8" else (0, 255)
    return RNG.integers(lo_t if lo is None else lo, hi_t if hi is None else hi, shape,
                        endpoint=True).astype(dtype)


def _case(atype: str, btype: str, trans_a: int, trans_b: int, per_column: bool, c: str | None,
          quantized: bool, alpha: float = 1.0, const_b: bool = True
          ) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    m_, k, n = 3, 40, 5
    pshape: tuple[int, ...] = (n,) if per_column else ()
    values: dict[str, Any] = {
        "A": _q((k, m_) if trans_a else (m_, k), atype), "as": np.float32(0.04),
        "az": _q((), atype, 100 if atype == "uint8" else -20, 140 if atype == "uint8" else 20),
        "B": _q((n, k) if trans_b else (k, n), btype),
        "bs": RNG.uniform(0.002, 0.02, pshape).astype(np.float32),
        "bz": _q(pshape, btype, 0, 10)}
    names = ["A", "as", "az", "B", "bs", "bz"]
    if c is not None:
        values["C"] = RNG.integers(-5000, 5000, {"scalar": (), "row": (n,), "full": (m_, n),
                                                 "col": (m_, 1)}[c]).astype(np.int32)
    names.append("C" if c is not None else "")
    if quantized:
        values["ys"] = np.float32(0.3)
        values["yz"] = np.array(128 if atype == "uint8" else 0, atype)
        names += ["ys", "yz"]
    while names[-1] == "":
        names.pop()
    node = helper.make_node("QGemm", names, ["y"], domain=MS, transA=trans_a, transB=trans_b,
                            alpha=alpha)
    inputs = ("A",) if const_b else ("A", "B")
    feeds = {k_: np.asarray(v) for k_, v in values.items() if k_ in inputs}
    inits = {k_: np.asarray(v) for k_, v in values.items() if k_ not in inputs}
    return model([node], feeds, inits), feeds


@pytest.mark.parametrize(("atype", "btype"), [("uint8", "uint8"), ("uint8", "int8"),
                                              ("int8", "int8")])
@pytest.mark.parametrize(("trans_a", "trans_b"), [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("per_column", [False, True])
def test_float_output(atype: str, btype: str, trans_a: int, trans_b: int,
                      per_column: bool) -> None:
    m, feeds = _case(atype, btype, trans_a, trans_b, per_column, "row", False, alpha=0.5)
    run_compare(m, feeds, run_ort(m, feeds), "QGemm", 1e-6, 1e-5)


@pytest.mark.parametrize(("atype", "btype"), [("uint8", "uint8"), ("uint8", "int8"),
                                              ("int8", "int8")])
@pytest.mark.parametrize("c", [None, "scalar", "full", "col"])
@pytest.mark.parametrize("per_column", [False, True])
def test_quantized_output(atype: str, btype: str, c: str | None, per_column: bool) -> None:
    m, feeds = _case(atype, btype, 0, 1, per_column, c, True)
    want = run_ort(m, feeds)["y"]
    got = converter.convert(m, target="spec").run(feeds)["y"]
    assert got.dtype == want.dtype
    diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
    print(f"MAXSTEP QGemm {int(diff.max())} {float(np.mean(diff != 0)):.4f}")
    assert diff.max() <= 1 and np.mean(diff != 0) <= 0.05


@pytest.mark.parametrize("backend", backend_params("reference", "onnxruntime", "torch"))
def test_runtime_b_and_backends(backend: str) -> None:
    m, feeds = _case("uint8", "int8", 0, 0, True, "full", False, alpha=2.0, const_b=False)
    run_compare(m, feeds, run_ort(m, feeds), "QGemm", 1e-6, 1e-5,
                (backend,))


def _bad(names: list[str], shapes: dict[str, tuple[int, ...]] | None = None,
         **attrs: Any) -> onnx.ModelProto:
    shapes = {"A": (2, 8), "B": (8, 3)} | (shapes or {})
    values: dict[str, np.ndarray] = {
        "A": np.zeros(shapes["A"], np.uint8), "B": np.zeros(shapes["B"], np.uint8),
        "s": np.array(0.1, np.float32), "z": np.array(0, np.uint8),
        "s4": np.ones(4, np.float32)}
    node = helper.make_node("QGemm", names, ["y"], domain=MS, **attrs)
    used = {n for n in names if n}
    return model([node], {"A": values["A"]}, {k: v for k, v in values.items()
                                               if k in used and k != "A"})


@pytest.mark.parametrize(("m", "reason", "fragment"), [
    (_bad(["A", "s", "z", "B"]), "invalid_model", "takes 6 to 9 inputs"),
    (_bad(["A", "s", "z", "B", "s", "z"], {"B": (7, 3)}), "invalid_model",
     "inner dimensions differ"),
    (_bad(["A", "s", "z", "B", "s4", "z"]), "invalid_model", "one element or [3]"),
    (_bad(["A", "s4", "z", "B", "s", "z"]), "invalid_model", "a_scale (input 1)"),
    (_bad(["A", "s", "z", "B", "s", "z", "", "s"]), "invalid_model", "given together"),
    (_bad(["A", "s", "z", "B", "s", "z"], transA=2), "invalid_model", "'transA' must be 0 or 1"),
])
def test_malformed(m: onnx.ModelProto, reason: str, fragment: str) -> None:
    expect_error(m, reason, fragment)
