"""The ONNX lowering's pattern forms (converter/runtimes/onnxruntime/lowering/patterns.py, the gather
index clamp, fusion.remove_dead_nodes): converted subgraphs are lowered as the ONNX ops
onnxruntime fuses (checked on onnxruntime's optimized graph), the WebNN operations a pattern
replaces leave no node behind, and the onnxruntime backend still matches the reference
backend (and onnxruntime on the original model) within the backend tests' tolerances."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import converter
from converter.core.webnn import MLGraphBuilder, MLOperand
from converter.runtimes.onnxruntime.to_onnx import to_onnx
from tests.backend_compare import compare_backends

RNG = np.random.default_rng(7)


def _ops(model: onnx.ModelProto) -> Counter[str]:
    return Counter(n.op_type for n in model.graph.node)


def _optimized_ops(model: onnx.ModelProto, tmp_path: Path) -> Counter[str]:
    """The op types of onnxruntime's optimized graph (the backend's session options)."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    ort.InferenceSession(model.SerializeToString(), options,
                         providers=["CPUExecutionProvider"])
    return _ops(onnx.load(str(tmp_path / "optimized.onnx")))


# -- dynamic quantization + integer matmul (quantize_dynamic's layout) -----------------------
def _quantized_matmul(weight_type: int) -> bytes:
    """x -> DynamicQuantizeLinear -> MatMulInteger(W) -> Cast -> Mul(x_scale * w_scale)
    -> Add(bias): what onnxruntime.quantization.quantize_dynamic writes for a MatMul."""
    k, n = 32, 16
    lo, hi = (-128, 128) if weight_type == TensorProto.INT8 else (0, 256)
    w = RNG.integers(lo, hi, (k, n)).astype(np.int8 if lo else np.uint8)
    wzp = np.array(3 if lo else 131, w.dtype)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(wzp, "wzp"),
             numpy_helper.from_array(np.array(0.02, np.float32), "wscale"),
             numpy_helper.from_array(RNG.standard_normal(n).astype(np.float32), "bias")]
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "qs", "qzp"]),
             helper.make_node("MatMulInteger", ["q", "w", "qzp", "wzp"], ["mmi"]),
             helper.make_node("Cast", ["mmi"], ["mmf"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["qs", "wscale"], ["scale"]),
             helper.make_node("Mul", ["mmf", "scale"], ["scaled"]),
             helper.make_node("Add", ["scaled", "bias"], ["y"])]
    graph = helper.make_graph(
        nodes, "quantized_matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, n])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    data: bytes = model.SerializeToString()
    return data


@pytest.mark.parametrize("weight_type", [TensorProto.INT8, TensorProto.UINT8],
                         ids=["int8", "uint8"])
def test_dynamic_quantized_matmul_is_lowered_as_its_onnx_ops(weight_type: int,
                                                             tmp_path: Path) -> None:
    data = _quantized_matmul(weight_type)
    result = converter.convert(data, target="spec")
    lowered = to_onnx(result.graph)
    ops = _ops(lowered)
    assert ops["DynamicQuantizeLinear"] == 1 and ops["MatMulInteger"] == 1, ops
    # the importer's arithmetic left no node behind
    assert not {"ReduceMin", "ReduceMax", "Round", "Clip", "IsNaN", "MatMul"} & set(ops), ops
    assert "DynamicQuantizeMatMul" in _optimized_ops(lowered, tmp_path)
    x = {"x": (RNG.standard_normal((1, 8, 32)) * 3).astype(np.float32)}
    ours = result.run(x, backend="onnxruntime")["y"]
    reference = result.run(x, backend="reference")["y"]
    original = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, x)[0]
    np.testing.assert_allclose(ours, reference, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours, original, rtol=1e-5, atol=1e-5)


def test_integer_matmul_without_dynamic_quantization(tmp_path: Path) -> None:
    """A MatMulInteger of a uint8 graph input with per-column weight zero points."""
    a = helper.make_tensor_value_info("a", TensorProto.UINT8, [2, 4, 8])
    y = helper.make_tensor_value_info("y", TensorProto.INT32, [2, 4, 3])
    w = RNG.integers(-128, 128, (8, 3)).astype(np.int8)
    inits = [numpy_helper.from_array(w, "w"),
             numpy_helper.from_array(np.array(7, np.uint8), "azp"),
             numpy_helper.from_array(np.array([1, -2, 3], np.int8), "wzp")]
    graph = helper.make_graph([helper.make_node("MatMulInteger", ["a", "w", "azp", "wzp"],
                                                ["y"])], "mmi", [a], [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    result = converter.convert(model.SerializeToString(), target="spec")
    lowered = to_onnx(result.graph)
    assert _ops(lowered) == Counter({"MatMulInteger": 1}), _ops(lowered)
    feeds = {"a": RNG.integers(0, 256, (2, 4, 8)).astype(np.uint8)}
    np.testing.assert_array_equal(result.run(feeds, backend="onnxruntime")["y"],
                                  result.run(feeds, backend="reference")["y"])


# -- RMS normalization ------------------------------------------------------------------------
@pytest.mark.parametrize("square", ["mul", "pow"])
def test_rms_normalization_reaches_onnxruntime_fusion(square: str, tmp_path: Path) -> None:
    weight = RNG.standard_normal(16).astype(np.float32)

    def build(b: MLGraphBuilder, o: dict[str, MLOperand]) -> dict[str, MLOperand]:
        x = o["x"]
        sq = b.mul(x, x) if square == "mul" else b.pow(x, b.constant(np.float32(2.0)))
        mean = b.reduce_mean(sq, axes=[2], keep_dimensions=True)
        r = b.reciprocal(b.sqrt(b.add(mean, b.constant(np.float32(1e-6)))))
        return {"y": b.mul(b.mul(x, r), b.constant(weight))}

    x = RNG.standard_normal((2, 5, 16)).astype(np.float32)
    compare_backends("onnxruntime", {"x": x}, build)
    lowered = _lowered({"x": x}, build)
    ops = _ops(lowered)
    assert ops["Pow"] == 1 and ops["Div"] == 1 and "Reciprocal" not in ops, ops
    assert "SimplifiedLayerNormalization" in _optimized_ops(lowered, tmp_path)


def test_square_is_pow_and_bit_exact() -> None:
    x = np.concatenate([RNG.standard_normal(64) * 1e3, [np.inf, -np.inf, np.nan, 3e19,
                                                        -0.0, 1e-30]]).astype(np.float32)
    out = compare_backends("onnxruntime", {"x": x}, lambda b, o: {"y": b.mul(o["x"], o["x"])},
                           rtol=0, atol=0)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out["y"], x * x)


# -- residual + bias before a layer normalization ---------------------------------------------
def test_residual_bias_layer_norm_becomes_skip_layer_normalization(tmp_path: Path) -> None:
    w = RNG.standard_normal((16, 16)).astype(np.float32)
    bias, gamma, beta = (RNG.standard_normal(16).astype(np.float32) for _ in range(3))

    def build(b: MLGraphBuilder, o: dict[str, MLOperand]) -> dict[str, MLOperand]:
        a = b.matmul(o["x"], b.constant(w))
        x = b.add(b.add(a, o["skip"]), b.constant(bias))
        return {"y": b.layer_normalization(x, axes=[2], scale=b.constant(gamma),
                                           bias=b.constant(beta))}

    feeds = {"x": RNG.standard_normal((1, 8, 16)).astype(np.float32),
             "skip": RNG.standard_normal((1, 8, 16)).astype(np.float32)}
    compare_backends("onnxruntime", feeds, build, rtol=1e-5, atol=1e-5)
    optimized = _optimized_ops(_lowered(feeds, build), tmp_path)
    assert optimized["SkipLayerNormalization"] == 1 and "LayerNormalization" not in optimized


# -- gather index clamp -----------------------------------------------------------------------
def test_runtime_gather_indices_get_one_clip() -> None:
    feeds = {"x": RNG.standard_normal((5, 3)).astype(np.float32),
             "i": np.array([[-7, -1, 0], [4, 9, 2]], np.int32)}

    def build(b: MLGraphBuilder, o: dict[str, MLOperand]) -> dict[str, MLOperand]:
        return {"y": b.gather(o["x"], o["i"])}

    compare_backends("onnxruntime", feeds, build)
    assert _ops(_lowered(feeds, build)) == Counter({"Cast": 1, "Clip": 1, "Gather": 1})


def _lowered(feeds: dict[str, np.ndarray], build: object) -> onnx.ModelProto:
    from converter.core.webnn import ML

    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    ops = {name: b.input(name, shape=list(a.shape), data_type=a.dtype.name)
           for name, a in feeds.items()}
    return to_onnx(b.build(build(b, ops)))  # type: ignore[operator]
