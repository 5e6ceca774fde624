"""ONNX QuantizeLinear / DequantizeLinear (per-tensor, per-axis, blocked; opsets 10-21),
DynamicQuantizeLinear, QLinearMatMul, QLinearConv, MatMulInteger, ConvInteger vs
onnxruntime. QLinear outputs may differ by one unit (onnxruntime requantizes in fixed point
/ float32)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import converter
from tests.op_mappings.onnx.harness import rand, run_ort
from tests.op_mappings.onnx.harness_ext import check_node, node_model

X = rand(2, 3, 4, seed=1, low=-4, high=4)


@pytest.mark.parametrize("opset", [10, 13, 19, 21])
@pytest.mark.parametrize("zp_type", ["uint8", "int8", None])
def test_quantize_per_tensor(opset: int, zp_type: str | None) -> None:
    zp = None if zp_type is None else np.array(3 if zp_type == "uint8" else -2, zp_type)
    items = [("x", X), ("s", np.array(0.05, np.float32)), ("zp", zp)]
    check_node("QuantizeLinear", items, opset=opset, constants=("s", "zp"))
    q = (rand(2, 3, 4, seed=2, low=0, high=200)).astype(zp_type or "uint8")
    check_node("DequantizeLinear", [("q", q), ("s", np.array(0.05, np.float32)), ("zp", zp)],
               opset=opset, constants=("s", "zp"))


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("const", [True, False])
def test_per_axis(axis: int, const: bool) -> None:
    n = X.shape[axis]
    scale = np.linspace(0.02, 0.1, n).astype(np.float32)
    zp = np.arange(n).astype(np.int8)
    consts = ("s", "zp") if const else ()
    check_node("QuantizeLinear", [("x", X), ("s", scale), ("zp", zp)], {"axis": axis},
               opset=13, constants=consts)
    q = rand(2, 3, 4, seed=3, low=-100, high=100).astype(np.int8)
    check_node("DequantizeLinear", [("q", q), ("s", scale), ("zp", zp)], {"axis": axis},
               opset=13, constants=consts)


@pytest.mark.parametrize("axis", [1, 2])
def test_blocked(axis: int) -> None:
    x = rand(2, 4, 6, seed=4)
    shape = [2, 4, 6]
    shape[axis] //= 2
    scale = rand(*shape, seed=5, low=0.02, high=0.1)
    zp = rand(*shape, seed=6, low=0, high=20).astype(np.uint8)
    attrs = {"axis": axis, "block_size": 2}
    check_node("QuantizeLinear", [("x", x), ("s", scale), ("zp", zp)], attrs, opset=21,
               constants=("s", "zp"))
    q = rand(2, 4, 6, seed=7, low=0, high=250).astype(np.uint8)
    check_node("DequantizeLinear", [("q", q), ("s", scale), ("zp", zp)], attrs, opset=21,
               constants=("s", "zp"))


def test_quantize_output_dtype_without_zero_point() -> None:
    check_node("QuantizeLinear", [("x", X), ("s", np.array(0.03, np.float32))],
               {"output_dtype": 3}, opset=21, constants=("s",))


def test_quantize_float16() -> None:
    check_node("QuantizeLinear", [("x", X.astype(np.float16)),
                                  ("s", np.array(0.05, np.float16)),
                                  ("zp", np.array(1, np.uint8))], opset=19,
               constants=("s", "zp"))


def test_native_report() -> None:
    res = check_node("QuantizeLinear", [("x", X), ("s", np.array(0.05, np.float32)),
                                        ("zp", np.array(3, np.uint8))], opset=13,
                     constants=("s", "zp"))
    assert res.report.to_dict()["ops"]["QuantizeLinear"]["native"]


@pytest.mark.parametrize("scale", [1.0, 3.0])
def test_dynamic_quantize_linear(scale: float) -> None:
    check_node("DynamicQuantizeLinear", [("x", X * scale)], opset=11,
               outputs=("y", "ys", "yzp"))
    check_node("DynamicQuantizeLinear", [("x", np.abs(X) + 0.5)], opset=11,
               outputs=("y", "ys", "yzp"))


def _close_q(op: str, items: list[tuple[str, Any]], attrs: dict[str, Any] | None = None,
             constants: tuple[str, ...] = ()) -> None:
    model = node_model(op, items, attrs, opset=13, constants=constants)
    feeds = {k: v for k, v in items if v is not None and k not in constants}
    ref = run_ort(model, feeds)["y"]
    got = converter.convert(model).run(feeds)["y"]
    assert got.dtype == ref.dtype and got.shape == ref.shape
    assert np.abs(got.astype(np.int64) - ref.astype(np.int64)).max() <= 1


@pytest.mark.parametrize("per_col", [False, True])
def test_qlinear_matmul(per_col: bool) -> None:
    a = rand(2, 3, 5, seed=1, low=0, high=255).astype(np.uint8)
    b = rand(5, 4, seed=2, low=0, high=255).astype(np.uint8)
    b_scale = (np.linspace(0.01, 0.03, 4) if per_col else np.array(0.02)).astype(np.float32)
    b_zp = (np.arange(4) + 100 if per_col else np.array(120)).astype(np.uint8)
    items = [("a", a), ("as", np.array(0.03, np.float32)), ("azp", np.array(128, np.uint8)),
             ("b", b), ("bs", b_scale), ("bzp", b_zp), ("ys", np.array(0.5, np.float32)),
             ("yzp", np.array(100, np.uint8))]
    _close_q("QLinearMatMul", items, constants=("as", "azp", "bs", "bzp", "ys", "yzp"))


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("per_channel", [False, True])
def test_qlinear_conv(bias: bool, per_channel: bool) -> None:
    x = rand(1, 2, 6, 6, seed=1, low=0, high=255).astype(np.uint8)
    w = rand(3, 2, 3, 3, seed=2, low=-100, high=100).astype(np.int8)
    ws = (np.array([0.01, 0.02, 0.015]) if per_channel else np.array(0.02)).astype(np.float32)
    wzp = (np.zeros(3) if per_channel else np.array(0)).astype(np.int8)
    items = [("x", x), ("xs", np.array(0.05, np.float32)), ("xzp", np.array(120, np.uint8)),
             ("w", w), ("ws", ws), ("wzp", wzp), ("ys", np.array(0.3, np.float32)),
             ("yzp", np.array(110, np.uint8)),
             ("b", np.array([100, -200, 50], np.int32) if bias else None)]
    _close_q("QLinearConv", items, {"pads": [1, 1, 1, 1], "strides": [1, 2]},
             constants=("xs", "xzp", "w", "ws", "wzp", "ys", "yzp", "b"))


def test_qlinear_conv_asymmetric_pads_exact_oracle() -> None:
    """onnxruntime is off by several units at one bottom-padded position here; the oracle is
    the float64 formula: saturate(round((conv of dequantized x and w) / ys) + yzp)."""
    x = rand(1, 2, 6, 6, seed=1, low=0, high=255).astype(np.uint8)
    w = rand(3, 2, 3, 3, seed=2, low=-100, high=100).astype(np.int8)
    items = [("x", x), ("xs", np.array(0.05, np.float32)), ("xzp", np.array(120, np.uint8)),
             ("w", w), ("ws", np.array(0.02, np.float32)), ("wzp", np.array(0, np.int8)),
             ("ys", np.array(0.3, np.float32)), ("yzp", np.array(110, np.uint8))]
    model = node_model("QLinearConv", items, {"pads": [1, 0, 1, 2]}, opset=13,
                       constants=("xs", "xzp", "w", "ws", "wzp", "ys", "yzp"))
    got = converter.convert(model).run({"x": x})["y"]
    xp = np.pad((x.astype(np.float64) - 120) * np.float32(0.05),
                [(0, 0), (0, 0), (1, 1), (0, 2)])
    wr = w.astype(np.float64) * np.float32(0.02)
    acc = np.zeros((1, 3, 6, 6))
    for i in range(3):
        for j in range(3):
            acc += np.einsum("nchw,oc->nohw", xp[:, :, i:i + 6, j:j + 6], wr[:, :, i, j])
    ref = np.clip(np.round(acc / np.float32(0.3)) + 110, 0, 255).astype(np.uint8)
    assert np.abs(got.astype(int) - ref.astype(int)).max() <= 1


@pytest.mark.parametrize("zp", [False, True])
def test_matmul_integer(zp: bool) -> None:
    a = rand(3, 5, seed=1, low=0, high=255).astype(np.uint8)
    b = rand(5, 4, seed=2, low=0, high=255).astype(np.uint8)
    items = [("a", a), ("b", b), ("azp", np.array(12, np.uint8) if zp else None),
             ("bzp", np.array(130, np.uint8) if zp else None)]
    check_node("MatMulInteger", items, opset=10, constants=("azp", "bzp"))


@pytest.mark.parametrize("zp", [False, True])
def test_conv_integer(zp: bool) -> None:
    x = rand(1, 2, 5, 5, seed=1, low=0, high=255).astype(np.uint8)
    w = rand(3, 2, 2, 2, seed=2, low=0, high=255).astype(np.uint8)
    items = [("x", x), ("w", w), ("xzp", np.array(100, np.uint8) if zp else None),
             ("wzp", np.array(7, np.uint8) if zp else None)]
    check_node("ConvInteger", items, {"pads": [1, 1, 0, 0]}, opset=10,
               constants=("xzp", "wzp"))


def test_dynamic_quantize_linear_rounding_tie() -> None:
    """0.5 / float32(5/255) is 25.5 in float32 (rounded to 26 like onnxruntime), 25.4999...
    in float64: the quotient must be rounded to float32 before roundEven."""
    x = np.array([0.0, 2.0, -3.0, -2.5, 1.34, 0.5], np.float32)
    check_node("DynamicQuantizeLinear", [("x", x)], opset=11, outputs=("y", "ys", "yzp"))


@pytest.mark.parametrize("op", ["QuantizeLinear", "DequantizeLinear"])
def test_per_tensor_scale_ignores_axis(op: str) -> None:
    """axis 1 on a rank-1 input is valid when the scale is per-tensor (ONNX ignores it)."""
    x = (np.arange(6, dtype=np.float32) - 2.0) if op == "QuantizeLinear" else \
        np.arange(6, dtype=np.uint8)
    check_node(op, [("x", x), ("s", np.array(0.5, np.float32)),
                    ("zp", np.array(3, np.uint8))], {"axis": 1}, opset=21,
               constants=("s", "zp"))
