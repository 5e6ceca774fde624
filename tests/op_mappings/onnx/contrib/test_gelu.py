"""com.microsoft Gelu, BiasGelu, FastGelu, QuickGelu (onnxruntime CPU kernels) and
BiasSplitGelu (CUDA only: checked against a standard-op graph in onnxruntime)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

from tests.op_mappings.onnx.contrib.oracle import (
    MS,
    check_ms,
    expect_error,
    ms_model,
    rng_array,
)
from tests.op_mappings.onnx.harness import statuses

X = rng_array(2, 3, 8, low=-5, high=5, seed=1)
BIAS = rng_array(8, seed=2)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_gelu(dtype: str) -> None:
    res = check_ms("Gelu", [("x", X.astype(dtype))])
    assert statuses(res)["com.microsoft::Gelu"] == ["native"]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("const_bias", [True, False])
def test_bias_gelu(dtype: str, const_bias: bool) -> None:
    check_ms("BiasGelu", [("a", X.astype(dtype)), ("b", BIAS.astype(dtype))],
             constants=("b",) if const_bias else ())


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("bias", [True, False])
def test_fast_gelu(dtype: str, bias: bool) -> None:
    items = [("x", X.astype(dtype)), ("b", BIAS.astype(dtype) if bias else None)]
    check_ms("FastGelu", items, rtol=1e-5, atol=1e-6)


def test_fast_gelu_2d() -> None:
    check_ms("FastGelu", [("x", rng_array(5, 16, seed=4)), ("b", rng_array(16, seed=5))],
             constants=("b",))


@pytest.mark.parametrize("alpha", [None, 1.0, 0.5, -2.0])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_quick_gelu(alpha: float | None, dtype: str) -> None:
    attrs = {} if alpha is None else {"alpha": alpha}
    check_ms("QuickGelu", [("x", X.astype(dtype))], attrs)


def _bias_split_gelu_ref(ins: list[str], outs: list[str]) -> list[onnx.NodeProto]:
    half = helper.make_tensor("half", 7, [2], [4, 4])
    return [
        helper.make_node("Add", [ins[0], ins[1]], ["s"]),
        helper.make_node("Constant", [], ["sp"], value=half),
        helper.make_node("Split", ["s", "sp"], ["l", "r"], axis=-1),
        helper.make_node("Gelu", ["r"], ["g"]),
        helper.make_node("Mul", ["l", "g"], [outs[0]]),
    ]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_bias_split_gelu(dtype: str) -> None:
    check_ms("BiasSplitGelu", [("x", X.astype(dtype)), ("b", BIAS.astype(dtype))],
             reference=_bias_split_gelu_ref, constants=("b",))


def test_malformed_nodes() -> None:
    expect_error(ms_model("FastGelu", [("x", X), ("b", rng_array(5))]), "invalid_model",
                 "bias has shape [5], expected [8]")
    expect_error(ms_model("BiasGelu", [("a", X)]), "invalid_model",
                 "BiasGelu takes 2 inputs, the node has 1")
    expect_error(ms_model("QuickGelu", [("x", X)], {"alpha": "big"}), "invalid_model",
                 "attribute 'alpha' must be a float")
    expect_error(ms_model("BiasSplitGelu", [("x", rng_array(2, 3, 7)), ("b", rng_array(7))]),
                 "invalid_model", "hidden size 7 is odd")
    expect_error(ms_model("FastGelu", [("x", np.array(1.0, np.float32)), ("b", rng_array(1))]),
                 "invalid_model", "input is a scalar")
    expect_error(ms_model("Gelu", [("x", np.arange(4, dtype=np.int32))]),
                 "unsupported_data_type", "int32")
    assert MS == "com.microsoft"
