"""com.microsoft GroupNorm and SkipGroupNorm vs onnxruntime.

onnxruntime has no CPU kernel for either op (only CUDA/ROCm: "Could not find an
implementation for GroupNorm(1)" on CPUExecutionProvider), so the oracle is onnxruntime
running the equivalent standard graph: [Cast to float32] -> (Add skip, Add bias ->) Transpose
to NCHW -> GroupNormalization-21 (per-channel scale/bias) -> [x·Sigmoid(x)] -> Transpose back
[-> Cast], which is the contrib schema's definition (float16 computed in float32, as the
contrib kernels do).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import pytest
from onnx import helper

from tests.op_mappings.onnx.contrib.oracle import (
    ReferenceFn,
    check_ms,
    compare,
    expect_error,
    ms_model,
    rng_array,
)

FLOAT = onnx.TensorProto.FLOAT


def _reference(groups: int, eps: float, activation: int, channels_last: int, dtype: str,
               skip: str = "") -> ReferenceFn:
    """Standard-op nodes computing GroupNorm / SkipGroupNorm (`skip`: "", "full", "nc")."""

    def nodes(ins: list[str], outs: list[str]) -> list[onnx.NodeProto]:
        res: list[onnx.NodeProto] = []
        to = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))

        def f32(name: str) -> str:
            if dtype == "float32" or not name:
                return name
            res.append(helper.make_node("Cast", [name], [name + "_f"], to=FLOAT))
            return name + "_f"

        x, gamma, beta = f32(ins[0]), f32(ins[1]), f32(ins[2])
        if skip:
            sk = f32(ins[3])
            if skip == "nc":
                res.append(helper.make_node("Constant", [], ["ax"], value=onnx.numpy_helper
                                            .from_array(np.array([2, 3] if not channels_last
                                                                 else [1, 2], np.int64))))
                res.append(helper.make_node("Unsqueeze", [sk, "ax"], ["sk4"]))
                sk = "sk4"
            res.append(helper.make_node("Add", [x, sk], ["sum0"]))
            x = "sum0"
            if len(ins) > 4 and ins[4]:
                bias = f32(ins[4])
                if not channels_last:
                    res.append(helper.make_node("Constant", [], ["bax"], value=onnx.numpy_helper
                                                .from_array(np.array([1, 2], np.int64))))
                    res.append(helper.make_node("Unsqueeze", [bias, "bax"], ["bias3"]))
                    bias = "bias3"
                res.append(helper.make_node("Add", [x, bias], ["sum1"]))
                x = "sum1"
            if len(outs) > 1 and outs[1]:
                res.append(helper.make_node("Cast", [x], [outs[1]], to=to))
        if channels_last:
            res.append(helper.make_node("Transpose", [x], ["nchw"], perm=[0, 3, 1, 2]))
            x = "nchw"
        res.append(helper.make_node("GroupNormalization", [x, gamma, beta], ["gn"],
                                    num_groups=groups, epsilon=eps))
        y = "gn"
        if activation:
            res.append(helper.make_node("Sigmoid", [y], ["sig"]))
            res.append(helper.make_node("Mul", [y, "sig"], ["silu"]))
            y = "silu"
        if channels_last:
            res.append(helper.make_node("Transpose", [y], ["nhwc"], perm=[0, 2, 3, 1]))
            y = "nhwc"
        res.append(helper.make_node("Cast", [y], [outs[0]], to=to))
        return res

    return nodes


def _shape(n: int, h: int, w: int, c: int, channels_last: int) -> tuple[int, ...]:
    return (n, h, w, c) if channels_last else (n, c, h, w)


CASES = [  # (n, h, w, c, groups)
    (1, 4, 4, 8, 2), (2, 3, 5, 32, 32), (2, 8, 8, 64, 32), (1, 1, 1, 6, 3), (3, 2, 7, 12, 1)]


@pytest.mark.parametrize("n,h,w,c,groups", CASES)
@pytest.mark.parametrize("activation", [0, 1])
@pytest.mark.parametrize("channels_last", [1, 0])
def test_group_norm(n: int, h: int, w: int, c: int, groups: int, activation: int,
                    channels_last: int) -> None:
    items = [("x", rng_array(*_shape(n, h, w, c, channels_last), seed=c + h)),
             ("gamma", rng_array(c, seed=1)), ("beta", rng_array(c, seed=2))]
    attrs = {"groups": groups, "activation": activation, "channels_last": channels_last,
             "epsilon": 1e-5}
    check_ms("GroupNorm", items, attrs, constants=("gamma", "beta"),
             reference=_reference(groups, 1e-5, activation, channels_last, "float32"),
             rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("param_type", ["float16", "float32"])
def test_group_norm_float16(param_type: str) -> None:
    c = 32
    items = [("x", rng_array(2, 4, 4, c, seed=3).astype(np.float16)),
             ("gamma", rng_array(c, seed=1).astype(param_type)),
             ("beta", rng_array(c, seed=2).astype(param_type))]
    attrs = {"groups": 8, "activation": 1, "epsilon": 1e-3}
    check_ms("GroupNorm", items, attrs,
             reference=_reference(8, 1e-3, 1, 1, "float16"), rtol=2e-3, atol=2e-3)


def _numpy_group_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, groups: int,
                      eps: float) -> np.ndarray:
    """float64 NHWC GroupNorm from the contrib schema's formula (no activation)."""
    n, h, w, c = x.shape
    g = x.astype(np.float64).reshape(n, h * w, groups, c // groups)
    mean = g.mean(axis=(1, 3), keepdims=True)
    var = ((g - mean) ** 2).mean(axis=(1, 3), keepdims=True)
    y = ((g - mean) / np.sqrt(var + eps)).reshape(x.shape)
    return y * gamma.astype(np.float64) + beta.astype(np.float64)


def test_group_norm_default_epsilon_large_mean() -> None:
    """Values far from zero: the variance is taken about the mean. onnxruntime's
    GroupNormalization-21 function (E[x²] − E[x]² in float32) gives NaN here, so the oracle is
    float64 numpy from the schema's formula."""
    x = rng_array(1, 4, 4, 16, seed=4, low=1000.0, high=1001.0)
    gamma, beta = rng_array(16, seed=1), rng_array(16, seed=2)
    model = ms_model("GroupNorm", [("x", x), ("g", gamma), ("b", beta)],
                     {"groups": 4, "activation": 0}, constants=("g", "b"))
    expected = _numpy_group_norm(x, gamma, beta, 4, 1e-5).astype(np.float32)
    compare(model, {"x": x}, {"y": expected}, "GroupNorm", rtol=1e-4, atol=2e-4)


SKIP_CASES = [  # (n, h, w, c, groups, skip form)
    (1, 4, 4, 8, 2, "full"), (2, 3, 5, 32, 16, "n11c"), (2, 8, 8, 64, 32, "nc"),
    (1, 2, 3, 6, 3, "full")]


@pytest.mark.parametrize("n,h,w,c,groups,form", SKIP_CASES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("outputs", [("y",), ("y", "s"), ("y", "")])
@pytest.mark.parametrize("channels_last", [1, 0])
def test_skip_group_norm(n: int, h: int, w: int, c: int, groups: int, form: str, bias: bool,
                         outputs: Sequence[str], channels_last: int) -> None:
    x_shape = _shape(n, h, w, c, channels_last)
    skip_shape = {"full": x_shape, "n11c": _shape(n, 1, 1, c, channels_last),
                  "nc": (n, c)}[form]
    items = [("x", rng_array(*x_shape, seed=c + w)), ("gamma", rng_array(c, seed=1)),
             ("beta", rng_array(c, seed=2)), ("skip", rng_array(*skip_shape, seed=5)),
             ("bias", rng_array(c, seed=6) if bias else None)]
    attrs = {"groups": groups, "activation": 1, "channels_last": channels_last,
             "epsilon": 1e-5}
    check_ms("SkipGroupNorm", items, attrs, outputs=outputs, constants=("gamma", "beta"),
             reference=_reference(groups, 1e-5, 1, channels_last, "float32",
                                  skip="nc" if form == "nc" else "full"),
             rtol=1e-4, atol=1e-5)


def test_skip_group_norm_float16() -> None:
    c = 16
    items = [("x", rng_array(1, 4, 4, c, seed=3).astype(np.float16)),
             ("gamma", rng_array(c, seed=1).astype(np.float16)),
             ("beta", rng_array(c, seed=2).astype(np.float16)),
             ("skip", rng_array(1, c, seed=4).astype(np.float16)),
             ("bias", rng_array(c, seed=5).astype(np.float16))]
    check_ms("SkipGroupNorm", items, {"groups": 4, "activation": 0}, outputs=("y", "s"),
             reference=_reference(4, 1e-5, 0, 1, "float16", skip="nc"), rtol=2e-3, atol=2e-3)


X = rng_array(1, 2, 2, 6, seed=0)
G = rng_array(6, seed=1)


@pytest.mark.parametrize("inputs,attrs,fragment", [
    ([("x", X), ("g", G), ("b", G)], {"groups": 4, "activation": 0}, "does not divide"),
    ([("x", X), ("g", G), ("b", G)], {"groups": 2, "activation": 2}, "activation=2"),
    ([("x", X), ("g", G), ("b", G)], {"groups": 2}, "'activation'"),
    ([("x", X[0]), ("g", G), ("b", G)], {"groups": 2, "activation": 0}, "4-D"),
    ([("x", X), ("g", G[:3]), ("b", G)], {"groups": 2, "activation": 0}, "gamma"),
])
def test_group_norm_malformed(inputs: list[tuple[str, np.ndarray]], attrs: dict[str, int],
                              fragment: str) -> None:
    reason = "unsupported_attribute" if "activation=" in fragment else "invalid_model"
    expect_error(ms_model("GroupNorm", inputs, attrs), reason, fragment)


def test_skip_group_norm_bad_skip() -> None:
    inputs = [("x", X), ("g", G), ("b", G), ("s", rng_array(1, 2, 1, 6))]
    expect_error(ms_model("SkipGroupNorm", inputs, {"groups": 2, "activation": 0}),
                 "invalid_model", "skip has shape [1, 2, 1, 6]")
