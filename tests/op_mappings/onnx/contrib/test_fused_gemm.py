"""com.microsoft FusedGemm (onnxruntime CPU kernel) and FusedMatMulActivation (DirectML only:
checked against Transpose + MatMul + Mul + the activation in onnxruntime)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper

from tests.op_mappings.onnx.contrib.oracle import check_ms, expect_error, ms_model, rng_array

A = rng_array(3, 5, seed=1)
B = rng_array(5, 4, seed=2, low=-1, high=1)
C = rng_array(4, seed=3)

ACTIVATIONS: list[tuple[str, dict[str, float]]] = [
    ("Relu", {}), ("Tanh", {}), ("Sigmoid", {}), ("LeakyRelu", {"alpha": 0.3}),
    ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}), ("Elu", {"alpha": 0.5}),
    ("ThresholdedRelu", {"alpha": 0.7}), ("Selu", {"alpha": 1.5, "gamma": 1.2}),
    ("Softplus", {}), ("Softsign", {}), ("ScaledTanh", {"alpha": 1.5, "beta": 0.5}),
    ("ParametricSoftplus", {"alpha": 0.5, "beta": 2.0})]


def _attrs(activation: str, params: dict[str, float]) -> dict[str, Any]:
    return {"activation": activation} | {f"activation_{k}": v for k, v in params.items()}


@pytest.mark.parametrize("activation,params", ACTIVATIONS)
def test_fused_gemm(activation: str, params: dict[str, float]) -> None:
    attrs = _attrs(activation, params) | {"alpha": 0.8, "beta": 1.5}
    check_ms("FusedGemm", [("a", A), ("b", B), ("c", C)], attrs, constants=("b", "c"),
             rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ta,tb", [(1, 0), (0, 1), (1, 1)])
def test_fused_gemm_transposed(ta: int, tb: int) -> None:
    a = np.ascontiguousarray(A.T) if ta else A
    b = np.ascontiguousarray(B.T) if tb else B
    check_ms("FusedGemm", [("a", a), ("b", b)], {"transA": ta, "transB": tb,
                                                  "activation": "Relu"}, rtol=1e-5, atol=1e-5)


def test_fused_gemm_float16() -> None:
    items = [("a", A.astype(np.float16)), ("b", B.astype(np.float16)),
             ("c", C.astype(np.float16))]
    check_ms("FusedGemm", items, {"activation": "LeakyRelu", "activation_alpha": 0.1},
             rtol=2e-3, atol=2e-2)


def _reference(activation: str, params: dict[str, float], ta: int, tb: int, alpha: float
               ) -> Any:
    def build(ins: list[str], outs: list[str]) -> list[Any]:
        nodes = []
        a, b = ins
        if ta:
            nodes.append(helper.make_node("Transpose", [a], ["at"], perm=[0, 2, 1]))
            a = "at"
        if tb:
            nodes.append(helper.make_node("Transpose", [b], ["bt"], perm=[0, 2, 1]))
            b = "bt"
        nodes.append(helper.make_node("MatMul", [a, b], ["mm"]))
        nodes.append(helper.make_node("Constant", [], ["al"],
                                      value=helper.make_tensor("al", 1, [], [alpha])))
        nodes.append(helper.make_node("Mul", ["mm", "al"], ["z"]))
        nodes.append(helper.make_node(activation, ["z"], outs, **params))
        return nodes
    return build


@pytest.mark.parametrize("activation,params,ta,tb", [
    ("Relu", {}, 0, 0), ("LeakyRelu", {"alpha": 0.2}, 1, 0),
    ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}, 0, 1), ("Elu", {"alpha": 0.5}, 1, 1),
    ("Sigmoid", {}, 0, 0), ("Softplus", {}, 1, 0)])
def test_fused_matmul_activation(activation: str, params: dict[str, float], ta: int,
                                 tb: int) -> None:
    a = rng_array(2, 3, 5, seed=4)
    b = rng_array(2, 5, 4, seed=5, low=-1, high=1)
    a = np.ascontiguousarray(np.swapaxes(a, 1, 2)) if ta else a
    b = np.ascontiguousarray(np.swapaxes(b, 1, 2)) if tb else b
    attrs = _attrs(activation, params) | {"transA": ta, "transB": tb, "alpha": 1.25}
    check_ms("FusedMatMulActivation", [("a", a), ("b", b)], attrs,
             reference=_reference(activation, params, ta, tb, 1.25), rtol=1e-5, atol=1e-5)


def test_malformed_nodes() -> None:
    expect_error(ms_model("FusedGemm", [("a", A), ("b", B)], {"activation": "Gelu"}),
                 "unsupported_attribute", "activation 'Gelu' is not one of")
    expect_error(ms_model("FusedGemm", [("a", A[None]), ("b", B)]), "invalid_model",
                 "A and B must be 2-D")
    for op in ("FusedGemm", "FusedMatMulActivation"):
        expect_error(ms_model(op, [("a", A), ("b", B)]), "invalid_model",
                     "required attribute 'activation' is missing")
