"""com.microsoft channels-last ops: NhwcMaxPool and QLinearConv (channels_last) vs
onnxruntime's CPU kernels; NhwcConv and NhwcFusedConv (CUDA only) vs Transpose + Conv
(+ Add + activation) + Transpose in onnxruntime."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper

from tests.op_mappings.onnx.contrib.oracle import check_ms, expect_error, ms_model, rng_array

X = rng_array(1, 7, 6, 4, seed=1)  # N, H, W, C
W = rng_array(6, 3, 3, 4, seed=2, low=-1, high=1)  # M, kH, kW, C
BIAS = rng_array(6, seed=3)


def _conv_reference(attrs: dict[str, Any], activation: tuple[str, dict[str, Any]] | None,
                    rank: int = 4) -> Any:
    to_first = [0, rank - 1, *range(1, rank - 1)]
    to_last = [0, *range(2, rank), 1]

    def build(ins: list[str], outs: list[str]) -> list[Any]:
        x, w, b, z = (ins + ["", ""])[:4]
        nodes = [helper.make_node("Transpose", [x], ["xt"], perm=to_first),
                 helper.make_node("Transpose", [w], ["wt"], perm=to_first),
                 helper.make_node("Conv", ["xt", "wt", b], ["yt"], **attrs),
                 helper.make_node("Transpose", ["yt"], ["y0"], perm=to_last)]
        last = "y0"
        if z:
            nodes.append(helper.make_node("Add", [last, z], ["y1"]))
            last = "y1"
        if activation is not None:
            nodes.append(helper.make_node(activation[0], [last], ["y2"], **activation[1]))
            last = "y2"
        nodes.append(helper.make_node("Identity", [last], outs))
        return nodes
    return build


@pytest.mark.parametrize("attrs", [{}, {"pads": [1, 0, 1, 2], "strides": [2, 1]},
                                   {"dilations": [1, 2]}, {"auto_pad": "SAME_UPPER"},
                                   {"group": 2}])
@pytest.mark.parametrize("bias", [True, False])
def test_nhwc_conv(attrs: dict[str, Any], bias: bool) -> None:
    w = W[..., :2] if attrs.get("group") == 2 else W
    items = [("x", X), ("w", w), ("b", BIAS if bias else None)]
    check_ms("NhwcConv", items, attrs, constants=("w", "b"),
             reference=_conv_reference(attrs, None), rtol=1e-4, atol=1e-5)


def test_nhwc_conv_1d() -> None:
    items = [("x", X[0]), ("w", W[:, 0]), ("b", BIAS)]
    check_ms("NhwcConv", items, {"pads": [1, 1]}, reference=_conv_reference({"pads": [1, 1]},
                                                                           None, rank=3),
             rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("activation,params", [("Relu", None), ("LeakyRelu", [0.2]),
                                               ("Clip", [-0.5, 1.5]), ("Sigmoid", None)])
@pytest.mark.parametrize("z", [True, False])
def test_nhwc_fused_conv(activation: str, params: list[float] | None, z: bool) -> None:
    attrs: dict[str, Any] = {"pads": [1, 1, 1, 1], "activation": activation}
    if params is not None:
        attrs["activation_params"] = params
    act_attrs = {"LeakyRelu": {"alpha": 0.2}, "Clip": {}}.get(activation, {})
    conv_attrs = {"pads": [1, 1, 1, 1]}
    if activation == "Clip":  # Clip takes its bounds as inputs: compare through Min/Max
        act = None
    else:
        act = (activation, act_attrs)
    items = [("x", X), ("w", W), ("b", BIAS), ("z", rng_array(1, 7, 6, 6, seed=4) if z
                                                else None)]
    reference = _conv_reference(conv_attrs, act)
    if activation == "Clip":
        def clipped(ins: list[str], outs: list[str]) -> list[Any]:
            nodes = _conv_reference(conv_attrs, None)(ins, ["c"])
            consts = [helper.make_node("Constant", [], [n], value=helper.make_tensor(
                n, 1, [], [v])) for n, v in (("lo", -0.5), ("hi", 1.5))]
            return nodes + consts + [helper.make_node("Clip", ["c", "lo", "hi"], outs)]
        reference = clipped
    check_ms("NhwcFusedConv", items, attrs, constants=("w",), reference=reference,
             rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [2, 2]}, {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [3, 2], "auto_pad": "SAME_UPPER"},
    {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [2, 2], "dilations": [2, 1]}])
def test_nhwc_max_pool(qtype: str, attrs: dict[str, Any]) -> None:
    info = np.iinfo(qtype)
    x = np.random.default_rng(5).integers(info.min, info.max + 1, (2, 7, 6, 3)).astype(qtype)
    check_ms("NhwcMaxPool", [("x", x)], attrs, rtol=0, atol=0)


def _qconv_items(qtype: str, per_channel: bool, bias: bool, channels_last: bool
                 ) -> list[tuple[str, np.ndarray | None]]:
    rng = np.random.default_rng(6)
    info = np.iinfo(qtype)
    x = rng.integers(info.min, info.max + 1, (1, 4, 7, 6)).astype(qtype)
    if channels_last:
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    w = rng.integers(-60, 60, (5, 4, 3, 3)).astype(np.int8)
    ws = (rng.uniform(0.002, 0.01, 5) if per_channel else np.array(0.005)).astype(np.float32)
    wz = np.zeros(ws.shape, np.int8)
    b = rng.integers(-2000, 2000, 5).astype(np.int32)
    return [("x", x), ("xs", np.array(0.05, np.float32)), ("xz", np.array(3, qtype)),
            ("w", w), ("ws", ws), ("wz", wz), ("ys", np.array(0.2, np.float32)),
            ("yz", np.array(-2 if qtype == "int8" else 120, qtype)),
            ("b", b if bias else None)]


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("channels_last", [0, 1])
def test_qlinear_conv(qtype: str, per_channel: bool, channels_last: int) -> None:
    items = _qconv_items(qtype, per_channel, True, bool(channels_last))
    constants = ("xs", "xz", "w", "ws", "wz", "ys", "yz", "b")
    check_ms("QLinearConv", items, {"channels_last": channels_last, "pads": [1, 1, 1, 1]},
             constants=constants, rtol=0, atol=1)


def test_malformed_nodes() -> None:
    expect_error(ms_model("NhwcConv", [("x", X[None]), ("w", W[None])]), "invalid_model",
                 "X must be 3-D or 4-D")
    expect_error(ms_model("NhwcMaxPool", [("x", X.astype(np.uint8))]), "invalid_model",
                 "required attribute 'kernel_shape' is missing")
