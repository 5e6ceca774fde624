"""Small models for the CLI, validation and zoo tests: the tiny ONNX CNN (models/), an ONNX
model with an op nobody maps, an ONNX embedding model (Gather on an int64 input), a small
TFLite model (CONV_2D + RELU, TANH) built with the flatbuffer object API, and a TFLite model
with an unknown custom op."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests.op_mappings.tflite.tflite_builder import ModelBuilder, S

ROOT = Path(__file__).resolve().parents[2]


def tiny_cnn(path: Path, seed: int = 0) -> Path:
    spec = importlib.util.spec_from_file_location("make_tiny_cnn", ROOT / "converter" / "zoo" /
                                                  "models" / "make_tiny_cnn.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    onnx.save_model(module.make_tiny_cnn(seed), path)
    return path


def unsupported_onnx(path: Path) -> Path:
    """x -> Relu -> com.example::Frobnicate 'frob' -> y."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Frobnicate", ["r"], ["y"], name="frob", domain="com.example")]
    graph = helper.make_graph(
        nodes, "unsupported", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("com.example", 1)],
                              ir_version=8)
    onnx.save_model(model, path)
    return path


def embedding_onnx(path: Path, vocab: int = 5) -> Path:
    """ids int64 [2, 6] -> Gather(table [vocab, 4]) ; attention_mask float [2, 6] multiplies
    the embeddings; image float [1, 3, 16, 16] and x float [2, 3] pass through Identity."""
    table = numpy_helper.from_array(
        np.random.default_rng(1).normal(size=(vocab, 4)).astype(np.float32), "table")
    nodes = [helper.make_node("Gather", ["table", "ids"], ["emb"], name="embed", axis=0),
             helper.make_node("Unsqueeze", ["attention_mask", "axes"], ["m"], name="unsq"),
             helper.make_node("Mul", ["emb", "m"], ["y"], name="mask_mul"),
             helper.make_node("Identity", ["image"], ["image_out"], name="id_image"),
             helper.make_node("Identity", ["x"], ["x_out"], name="id_x")]
    axes = numpy_helper.from_array(np.array([-1], np.int64), "axes")
    graph = helper.make_graph(
        nodes, "embedding",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 6]),
         helper.make_tensor_value_info("attention_mask", TensorProto.FLOAT, [2, 6]),
         helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 16, 16]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6, 4]),
         helper.make_tensor_value_info("image_out", TensorProto.FLOAT, [1, 3, 16, 16]),
         helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [2, 3])], [table, axes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              ir_version=8)
    onnx.save_model(model, path)
    return path


def tiny_tflite(path: Path | None = None, custom: bool = False) -> bytes:
    """x [1, 8, 8, 3] -> CONV_2D (3x3, SAME, fused RELU) 'conv' -> TANH 'act' -> y; with
    `custom`, the TANH is replaced by the custom op 'Frobnicate'."""
    rng = np.random.default_rng(0)
    mb = ModelBuilder()
    x = mb.input("x", [1, 8, 8, 3])
    w = mb.const("w", rng.normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32))
    b = mb.const("b", rng.normal(0, 0.1, (4,)).astype(np.float32))
    conv = mb.tensor("conv", [1, 8, 8, 4])
    opts = S.Conv2DOptionsT()
    opts.padding = S.Padding.SAME
    opts.strideW = opts.strideH = 1
    opts.dilationWFactor = opts.dilationHFactor = 1
    opts.fusedActivationFunction = S.ActivationFunctionType.RELU
    mb.op("CONV_2D", [x, w, b], [conv], opts)
    y = mb.output(mb.tensor("act", [1, 8, 8, 4]))
    if custom:
        mb.op("CUSTOM", [conv], [y], custom_code="Frobnicate")
    else:
        mb.op("TANH", [conv], [y])
    data = mb.build()
    if path is not None:
        path.write_bytes(data)
    return data
