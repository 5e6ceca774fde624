"""ONNX QuantizeLinear / DequantizeLinear (per-tensor, per-axis, blocked; opsets 10-21),
DynamicQuantizeLinear, QLinearMatMul, QLinearConv, MatMulInteger, ConvInteger vs
onnxruntime. QLinear outputs may differ by one unit (onnxruntime requantizes in fixed point
/ float32)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import converter
from tests.op_mappings.onnx.contrib.oracle import expect_error
from tests.op_mappings.onnx.harness import check_node, node_model, rand, run_ort, statuses

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


# -- int4 / uint4 (opset 21) ------------------------------------------------------------------
def _four_bit(shape: tuple[int, ...], qtype: str, seed: int) -> np.ndarray:
    """Random 4-bit values as the ml_dtypes array the ONNX reader gives for INT4/UINT4."""
    lo, hi = (-8, 7) if qtype == "int4" else (0, 15)
    values = np.random.default_rng(seed).integers(lo, hi + 1, shape)
    return values.astype(helper.tensor_dtype_to_np_dtype(
        TensorProto.INT4 if qtype == "int4" else TensorProto.UINT4))


def _constant_dtypes(res: converter.ConversionResult) -> list[str]:
    return sorted(c.data_type for c in res.graph.constants)


# (weight shape, scale shape, attributes)
FOUR_BIT_CASES = [
    ((6, 8), (), {}),
    ((6, 8), (8,), {"axis": 1}),
    ((64, 6), (2, 6), {"axis": 0, "block_size": 32}),
    ((6, 64), (6, 4), {"axis": 1, "block_size": 16}),
    ((40, 3), (3, 3), {"axis": 0, "block_size": 16}),  # partial last block
    ((2, 3, 32), (2, 3, 2), {"axis": -1, "block_size": 16}),
]


@pytest.mark.parametrize(("shape", "scale_shape", "attrs"), FOUR_BIT_CASES)
@pytest.mark.parametrize("qtype", ["int4", "uint4"])
@pytest.mark.parametrize("zp", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_dequantize_4bit_constant_stays_packed(shape: tuple[int, ...],
                                               scale_shape: tuple[int, ...],
                                               attrs: dict[str, int], qtype: str, zp: bool,
                                               dtype: str) -> None:
    """A DequantizeLinear of an INT4/UINT4 initializer is one native dequantizeLinear of a
    4-bit constant (not folded to float), equal to onnxruntime."""
    w = _four_bit(shape, qtype, 1)
    scale = rand(*scale_shape, seed=2, low=0.01, high=0.2).astype(dtype) if scale_shape \
        else np.array(0.07, dtype)
    z = _four_bit(scale_shape, qtype, 3) if zp else None
    res = check_node("DequantizeLinear", [("w", w), ("s", scale), ("zp", z)], attrs,
                     opset=21, constants=("w", "s", "zp"), rtol=0, atol=0)
    assert statuses(res)["DequantizeLinear"] == ["native" if shape[0] != 40 else "decomposed"]
    assert qtype in _constant_dtypes(res)
    packed = [c for c in res.graph.constants if c.data_type == qtype and c.shape[-1] > 2]
    assert packed and packed[0].descriptor.byte_length == (packed[0].descriptor.size + 1) // 2


@pytest.mark.parametrize("qtype", ["int4", "uint4"])
@pytest.mark.parametrize("block", [0, 16])
def test_quantize_to_4bit_then_dequantize(qtype: str, block: int) -> None:
    """QuantizeLinear to int4/uint4 (zero point type, or output_dtype without zero point)
    of a graph input, read back by DequantizeLinear."""
    x = rand(4, 32, seed=4, low=-2, high=2)
    scale = rand(4, 2, seed=5, low=0.05, high=0.3) if block else np.array(0.2, np.float32)
    zp = _four_bit(scale.shape, qtype, 6)
    code = TensorProto.INT4 if qtype == "int4" else TensorProto.UINT4
    for with_zp in (True, False):
        attrs = {"axis": 1} | ({"block_size": block} if block else {})
        q_in = ["x", "s", "zp"] if with_zp else ["x", "s"]
        q_attrs = attrs if with_zp else attrs | {"output_dtype": code}
        nodes = [helper.make_node("QuantizeLinear", q_in, ["q"], **q_attrs),
                 helper.make_node("DequantizeLinear", q_in[1:] and ["q", *q_in[1:]], ["y"],
                                  **attrs)]
        inits = [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zp, "zp")]
        graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info(
            "x", TensorProto.FLOAT, list(x.shape))], [onnx.ValueInfoProto(name="y")],
            inits if with_zp else inits[:1])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)],
                                  ir_version=10)
        expected = run_ort(model, {"x": x})["y"]
        got = converter.convert(model).run({"x": x})["y"]
        np.testing.assert_array_equal(got, expected)


def test_quantize_constant_to_4bit_folds_and_dequantize_stays() -> None:
    """QuantizeLinear of a float initializer to int4 folds to an int4 constant (numpy, round
    half to even, saturation); the DequantizeLinear reading it stays in the graph."""
    w = rand(32, 4, seed=7, low=-3, high=3)
    w[0, :4] = [0.25, 0.75, 100.0, -100.0]  # ties (scale 0.5) and saturation
    scale = np.full((2, 4), 0.5, np.float32)
    zp = _four_bit((2, 4), "int4", 8)
    attrs = {"axis": 0, "block_size": 16}
    nodes = [helper.make_node("QuantizeLinear", ["w", "s", "zp"], ["q"], **attrs),
             helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["wq"], **attrs),
             helper.make_node("MatMul", ["x", "wq"], ["y"])]
    inits = [numpy_helper.from_array(a, n) for a, n in ((w, "w"), (scale, "s"), (zp, "zp"))]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [3, 32])], [onnx.ValueInfoProto(name="y")], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)],
                              ir_version=10)
    x = rand(3, 32, seed=9)
    res = converter.convert(model)
    np.testing.assert_allclose(res.run({"x": x})["y"], run_ort(model, {"x": x})["y"],
                               rtol=1e-5, atol=1e-5)
    st = statuses(res)
    assert st["QuantizeLinear"] == ["folded"] and st["DequantizeLinear"] == ["native"]
    assert "int4" in _constant_dtypes(res)


@pytest.mark.parametrize(("inputs", "attrs", "reason", "fragment"), [
    ((6, 64), {"axis": 1, "block_size": -16}, "invalid_model", "block_size must be >= 0"),
    ((6, 3), {"axis": 1, "block_size": 16}, "invalid_model", "does not match input dimension"),
    ((3, 4), {"axis": 1, "block_size": 16}, "invalid_model", "must equal the input shape"),
])
def test_malformed_blocked_dequantize(inputs: tuple[int, ...], attrs: dict[str, int],
                                      reason: str, fragment: str) -> None:
    w = _four_bit((6, 64), "int4", 10)
    scale = np.full(inputs, 0.1, np.float32)
    model = node_model("DequantizeLinear", [("w", w), ("s", scale)], attrs, opset=21,
                       constants=("w", "s"))
    expect_error(model, reason, fragment)


def test_qlinear_conv_3d() -> None:
    """3-D QLinearConv through the Conv mapping's NCDHW form (vs onnxruntime)."""
    x = rand(1, 2, 4, 5, 5, seed=1, low=0, high=255).astype(np.uint8)
    w = rand(3, 2, 2, 3, 3, seed=2, low=-100, high=100).astype(np.int8)
    items = [("x", x), ("xs", np.array(0.05, np.float32)), ("xzp", np.array(120, np.uint8)),
             ("w", w), ("ws", np.array(0.02, np.float32)), ("wzp", np.array(0, np.int8)),
             ("ys", np.array(0.3, np.float32)), ("yzp", np.array(110, np.uint8))]
    _close_q("QLinearConv", items, {"pads": [1, 1, 1, 1, 1, 1], "strides": [2, 1, 2]},
             constants=("xs", "xzp", "w", "ws", "wzp", "ys", "yzp"))


def test_conv_integer_3d() -> None:
    x = rand(1, 2, 3, 5, 5, seed=1, low=0, high=255).astype(np.uint8)
    w = rand(3, 2, 2, 2, 2, seed=2, low=0, high=255).astype(np.uint8)
    items = [("x", x), ("w", w), ("xzp", np.array(100, np.uint8)),
             ("wzp", np.array(7, np.uint8))]
    check_node("ConvInteger", items, {"pads": [1, 0, 1, 0, 1, 0]}, opset=10,
               constants=("xzp", "wzp"))
