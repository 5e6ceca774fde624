"""com.microsoft FusedConv vs onnxruntime's CPU kernel: every activation it supports, with
and without bias and the Z (sum) input, 1-D and 2-D, float32 and float16."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.op_mappings.onnx.contrib.oracle import check_ms, expect_error, ms_model, rng_array

X = rng_array(1, 4, 7, 6, seed=1)
W = rng_array(6, 4, 3, 3, seed=2, low=-1, high=1)
BIAS = rng_array(6, seed=3)

ACTIVATIONS = [(None, None), ("Relu", None), ("Tanh", None), ("Sigmoid", None),
               ("LeakyRelu", [0.2]), ("Clip", [-0.5, 1.5]), ("HardSigmoid", [0.3, 0.4]),
               ("Relu", [1.0])]


@pytest.mark.parametrize("activation,params", ACTIVATIONS)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("z", [True, False])
def test_fused_conv(activation: str | None, params: list[float] | None, bias: bool,
                    z: bool) -> None:
    attrs: dict[str, Any] = {"pads": [1, 0, 1, 2]}
    if activation is not None:
        attrs["activation"] = activation
    if params is not None:
        attrs["activation_params"] = params
    items = [("x", X), ("w", W), ("b", BIAS if bias else None),
             ("z", rng_array(1, 6, 7, 6, seed=4) if z else None)]
    check_ms("FusedConv", items, attrs, constants=("w", "b"), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("attrs", [
    {"strides": [2, 1], "dilations": [1, 2], "activation": "Relu"},
    {"auto_pad": "SAME_UPPER", "activation": "Sigmoid"},
    {"group": 2, "activation": "LeakyRelu", "activation_params": [0.1],
     "kernel_shape": [3, 3]},
])
def test_fused_conv_attributes(attrs: dict[str, Any]) -> None:
    w = W[:, :2] if attrs.get("group") == 2 else W
    check_ms("FusedConv", [("x", X), ("w", w), ("b", BIAS)], attrs, constants=("w", "b"),
             rtol=1e-4, atol=1e-5)


def test_fused_conv_3d() -> None:
    """3-D spatial (the Conv mapping's NCDHW form)."""
    items = [("x", rng_array(1, 4, 5, 6, 4, seed=6)), ("w", rng_array(6, 4, 3, 3, 2, seed=7)),
             ("b", BIAS), ("z", rng_array(1, 6, 3, 4, 3, seed=8))]
    check_ms("FusedConv", items, {"activation": "Relu"}, constants=("w", "b"), rtol=1e-4,
             atol=1e-5)


def test_fused_conv_1d() -> None:
    items = [("x", X[:, :, :, 0]), ("w", W[:, :, :, 0]), ("b", BIAS),
             ("z", rng_array(1, 6, 5, seed=5))]
    check_ms("FusedConv", items, {"activation": "Tanh"}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("activation,params", [("Relu", None), ("Clip", [0.0, 2.0])])
def test_fused_conv_float16(activation: str, params: list[float] | None) -> None:
    attrs = {"activation": activation} | ({} if params is None else
                                          {"activation_params": params})
    items = [("x", X.astype(np.float16)), ("w", W.astype(np.float16)),
             ("b", BIAS.astype(np.float16))]
    check_ms("FusedConv", items, attrs, constants=("w",), rtol=2e-3, atol=2e-2)


def test_malformed_nodes() -> None:
    items = [("x", X), ("w", W)]
    expect_error(ms_model("FusedConv", items, {"activation": "Gelu"}),
                 "unsupported_attribute", "activation 'Gelu' is not one of")
    expect_error(ms_model("FusedConv", items, {"activation": "LeakyRelu"}), "invalid_model",
                 "LeakyRelu needs 1 activation_params, got None")
    expect_error(ms_model("FusedConv", items, {"activation": "Clip",
                                               "activation_params": [0.0]}),
                 "invalid_model", "Clip needs 2 activation_params, got [0.0]")
    expect_error(ms_model("FusedConv", items + [("b", BIAS), ("z", rng_array(1, 6, 4, 4))]),
                 "invalid_model", "Z has shape [1, 6, 4, 4], expected [1, 6, 5, 4]")
    expect_error(ms_model("FusedConv", [("x", X)]), "invalid_model",
                 "takes 2 to 4 inputs, the node has 1")
    expect_error(ms_model("FusedConv", [("x", X[..., None, None]), ("w", W[..., None, None])]),
                 "unsupported_attribute", "spatial")
