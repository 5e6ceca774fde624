"""converter.passes.targets.rules_quant's rules for dequantizeLinear -> operator ->
quantizeLinear patterns and quantized integers (quantize-unfuse, quantize-bias,
quantize-gemm-channel, quantize-integers): which graphs they
rewrite for chromium-tflite, and that the rewritten graph computes on the reference runtime
exactly what the original computes (every case of the quantized sweep, and float64 numpy
formulas for the rewritten ones). Whether Chromium then gets it right is the browser test
tests/browser/test_sweep_quantized.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraphBuilder, MLOperand
from converter.passes.targets import load_target
from converter.passes.targets.passes import lower
from converter.validate.conformance import case_graph
from converter.validate.sweep_quantized import quantized_cases

TARGET = load_target("chromium-tflite")
RULES = {"quantize-unfuse", "quantize-bias", "quantize-gemm-channel", "quantize-integers"}


def _q(b: MLGraphBuilder, x: MLOperand, scale: float, zero: int, dtype: str) -> MLOperand:
    shape = [1] * x.rank
    return b.quantize_linear(x, b.constant(np.full(shape, scale, np.float32)),
                             b.constant(np.full(shape, zero).astype(dtype), dtype))


def _dq(b: MLGraphBuilder, q: MLOperand, scale: Any, zero: Any) -> MLOperand:
    s = np.asarray(scale, np.float32)
    s = s.reshape(s.shape if s.ndim == q.rank else [1] * q.rank)
    z = np.broadcast_to(np.asarray(zero), s.shape).astype(q.data_type)
    return b.dequantize_linear(q, b.constant(s), b.constant(z, q.data_type))


def _same(graph: Any, lowered: Any, feeds: dict[str, np.ndarray]) -> None:
    ctx = graph.context
    want, got = ctx.compute(graph, feeds), ctx.compute(lowered, feeds)
    for name, value in want.items():
        assert got[name].dtype == value.dtype
        np.testing.assert_array_equal(got[name], value, err_msg=name)


@pytest.mark.slow
def test_every_quantized_case_keeps_its_values() -> None:
    seen: set[str] = set()
    for case in quantized_cases():
        graph, feeds = case_graph(case.case, MLGraphBuilder(ML().create_context()))
        lowered = lower(graph, TARGET)
        seen |= set(lowered.applied) & RULES
        _same(graph, lowered.graph, feeds)
    assert seen == RULES


def _unary(op: str, qtype: str, out: tuple[float, int], **options: Any) -> Any:
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", [1, 4, 4, 6], qtype)
    y = getattr(b, op)(_dq(b, x, 0.05, 3 if qtype == "int8" else 131), **options)
    return b.build({"y": _q(b, y, *out, qtype)})


@pytest.mark.parametrize(("op", "options"), [
    ("reduce_max", {"axes": [1, 2], "keep_dimensions": True}),
    ("reduce_min", {"axes": [3]}),
    ("transpose", {"permutation": [0, 3, 1, 2]}),
])
@pytest.mark.parametrize("qtype", ["int8", "uint8"])
def test_unfuse_when_output_parameters_differ(op: str, options: dict[str, Any],
                                              qtype: str) -> None:
    zero = 3 if qtype == "int8" else 131
    same = _unary(op, qtype, (0.05, zero), **options)
    assert "quantize-unfuse" not in lower(same, TARGET).applied
    for out in ((0.07, zero), (0.05, zero + 1)):
        graph = _unary(op, qtype, out, **options)
        lowered = lower(graph, TARGET)
        assert lowered.applied.get("quantize-unfuse") == 1
        kinds = [o.op for o in lowered.graph.operations]
        assert kinds[kinds.index("quantizeLinear") - 1] == "reshape"
        rng = np.random.default_rng(1)
        lo, hi = (-128, 127) if qtype == "int8" else (0, 255)
        x = rng.integers(lo, hi + 1, (1, 4, 4, 6)).astype(qtype)
        _same(graph, lowered.graph, {"x": x})
        # the spec's answer, float64: dequantize, the operator, round half to even
        f = (x.astype(np.float64) - zero) * np.float32(0.05)
        y = {"reduce_max": lambda v: v.max(axis=(1, 2), keepdims=True),
             "reduce_min": lambda v: v.min(axis=3),
             "transpose": lambda v: v.transpose(0, 3, 1, 2)}[op](f)
        want = np.clip(np.rint(y / np.float64(np.float32(out[0]))) + out[1], lo, hi)
        got = graph.context.compute(lowered.graph, {"x": x})["y"]
        np.testing.assert_array_equal(got, want.astype(qtype))


def test_unfuse_softmax_only_for_uint8_outputs_other_than_litert_s() -> None:
    def softmax(qtype: str, out: tuple[float, int]) -> dict[str, int]:
        b = MLGraphBuilder(ML().create_context())
        x = b.input("x", [3, 10], qtype)
        y = b.softmax(_dq(b, x, 0.05, 3), 1)
        return lower(b.build({"y": _q(b, y, *out, qtype)}), TARGET).applied

    assert "quantize-unfuse" not in softmax("uint8", (1 / 256, 0))
    assert "quantize-unfuse" not in softmax("int8", (0.07, -5))  # Chromium checks int8
    assert softmax("uint8", (0.07, 120)).get("quantize-unfuse") == 1
    assert softmax("uint8", (1 / 256, 128)).get("quantize-unfuse") == 1


def _conv(bias_scale: Any, filter_scale: Any, bias_values: np.ndarray) -> tuple[Any, Any]:
    """dq(x) -> conv2d (nhwc, ohwi, 4 output channels) with a dequantized int32 bias ->
    q; the graph and a float64 formula of its output before quantization."""
    rng = np.random.default_rng(7)
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", [1, 3, 3, 2], "int8")
    w = rng.integers(-127, 128, (4, 1, 1, 2)).astype(np.int8)
    ws = np.asarray(filter_scale, np.float32).reshape(-1)
    wdq = _dq(b, b.constant(w), ws.reshape(-1, 1, 1, 1) if ws.size > 1 else ws, 0)
    bs = np.asarray(bias_scale, np.float32).reshape(-1)
    bias = _dq(b, b.constant(bias_values.astype(np.int32)), bs, np.zeros(bs.size, np.int32))
    y = b.conv2d(_dq(b, x, 0.05, 3), wdq, input_layout="nhwc", filter_layout="ohwi",
                 bias=bias)
    graph = b.build({"y": _q(b, y, 0.2, -5, "int8")})
    xv = rng.integers(-128, 128, (1, 3, 3, 2)).astype(np.int8)
    wf = w.astype(np.float64) * ws.astype(np.float64).reshape(-1, 1, 1, 1)
    xf = (xv.astype(np.float64) - 3) * np.float64(np.float32(0.05))
    ref = xf @ wf[:, 0, 0, :].T + bias_values * bs.astype(np.float64)
    return (graph, xv), ref


def test_bias_folded_unless_its_scale_is_the_product() -> None:
    bias = np.array([1000, -2000, 30000, 7], np.int32)
    ws = np.array([0.01, 0.02, 0.005, 0.011], np.float32)
    product = (np.float32(0.05) * ws.astype(np.float64)).astype(np.float32)
    (graph, _), _ = _conv(product, ws, bias)  # per channel, as LiteRT wants it
    assert "quantize-bias" not in lower(graph, TARGET).applied
    for scale in (product[:1], product * np.float32(1.015)):  # per tensor; 1.5% off
        (graph, x), ref = _conv(scale, ws, bias)
        lowered = lower(graph, TARGET)
        assert lowered.applied.get("quantize-bias") == 1
        conv = next(o for o in lowered.graph.operations if o.op == "conv2d")
        assert conv.options["bias"].kind == "constant"
        assert conv.options["bias"].data_type == "float32"
        _same(graph, lowered.graph, {"x": x})
        got = graph.context.compute(lowered.graph, {"x": x})["y"]
        want = np.clip(np.rint(ref / np.float64(np.float32(0.2))) - 5, -128, 127)
        assert np.abs(got.astype(np.int64) - want).max() <= 1  # float32 conv vs float64


def test_gemm_channel_b_stored_transposed() -> None:
    rng = np.random.default_rng(5)
    b = MLGraphBuilder(ML().create_context())
    a = b.input("a", [3, 8], "int8")
    w = rng.integers(-127, 128, (8, 6)).astype(np.int8)
    ws = rng.uniform(0.002, 0.02, (1, 6)).astype(np.float32)
    y = b.gemm(_dq(b, a, 0.05, 3), _dq(b, b.constant(w), ws, np.zeros((1, 6), np.int8)))
    graph = b.build({"y": _q(b, y, 0.3, -5, "int8")})
    lowered = lower(graph, TARGET)
    assert lowered.applied.get("quantize-gemm-channel") == 1
    gemm = next(o for o in lowered.graph.operations if o.op == "gemm")
    assert gemm.options["bTranspose"] is True
    av = rng.integers(-128, 128, (3, 8)).astype(np.int8)
    _same(graph, lowered.graph, {"a": av})
    ref = ((av.astype(np.float64) - 3) * np.float64(np.float32(0.05))) @ (
        w.astype(np.float64) * ws.astype(np.float64))
    want = np.clip(np.rint(ref / np.float64(np.float32(0.3))) - 5, -128, 127)
    got = graph.context.compute(lowered.graph, {"a": av})["y"]
    assert np.abs(got.astype(np.int64) - want).max() <= 1
    # per tensor, or already bTranspose: left alone
    b = MLGraphBuilder(ML().create_context())
    a = b.input("a", [3, 8], "int8")
    y = b.gemm(_dq(b, a, 0.05, 3), _dq(b, b.constant(w), 0.01, 0))
    assert "quantize-gemm-channel" not in lower(b.build({"y": y}), TARGET).applied


def test_integer_concat_and_nearest_resample_of_quantized_values() -> None:
    rng = np.random.default_rng(9)
    for qtype in ("int8", "uint8"):
        b = MLGraphBuilder(ML().create_context())
        x, y = b.input("x", [1, 3, 3, 2], "float32"), b.input("y", [1, 3, 3, 1], "float32")
        qx, qy = _q(b, x, 0.05, 3, qtype), _q(b, y, 0.05, 3, qtype)
        cat = b.concat([qx, qy], 3)
        near = b.resample2d(qx, scales=[2.0, 2.0], axes=[1, 2])
        graph = b.build({"cat": cat, "near": near})
        lowered = lower(graph, TARGET)
        assert lowered.applied.get("quantize-integers") == 2
        types = {o.op: o.outputs[0].data_type for o in lowered.graph.operations}
        assert (types["concat"], types["resample2d"]) == ("int32", "float32")
        feeds = {"x": rng.uniform(-7, 7, (1, 3, 3, 2)).astype(np.float32),
                 "y": rng.uniform(-7, 7, (1, 3, 3, 1)).astype(np.float32)}
        _same(graph, lowered.graph, feeds)
        got = graph.context.compute(lowered.graph, feeds)
        lo, hi = (-128, 127) if qtype == "int8" else (0, 255)
        q = {k: np.clip(np.rint(v / np.float64(np.float32(0.05))) + 3, lo, hi).astype(qtype)
             for k, v in feeds.items()}
        np.testing.assert_array_equal(got["cat"], np.concatenate([q["x"], q["y"]], axis=3))
        np.testing.assert_array_equal(got["near"], q["x"].repeat(2, 1).repeat(2, 2))
    # integers of graph inputs and constants, and linear resampling: left alone
    b = MLGraphBuilder(ML().create_context())
    a = b.input("a", [2, 3], "int8")
    c = b.concat([a, b.constant(np.ones((2, 1), np.int8))], 1)
    f = b.resample2d(b.input("f", [1, 2, 4, 4], "float32"), mode="linear")
    assert "quantize-integers" not in lower(b.build({"c": c, "f": f}), TARGET).applied


def test_rewritten_cases_match_the_expected_values_on_onnxruntime() -> None:
    """Every quantized case these rules rewrite, lowered, on onnxruntime (an independent
    runtime): within the case's tolerance of its expected values (one quantization step)."""
    pytest.importorskip("onnxruntime")
    from converter.validate import compile_graph
    from converter.validate.conformance import compare_case

    checked = 0
    for case in quantized_cases():
        graph, feeds = case_graph(case.case, MLGraphBuilder(ML().create_context()))
        lowered = lower(graph, TARGET)
        if not set(lowered.applied) & RULES:
            continue
        ok, worst, _ = compare_case(case.case, compile_graph(lowered.graph, "onnxruntime")
                                    .run(feeds))
        assert ok, (case.name, worst)
        checked += 1
    assert checked >= 40
