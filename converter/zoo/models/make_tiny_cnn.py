"""Write a small ONNX CNN built with onnx.helper: Conv+Relu+MaxPool (twice), Flatten, Gemm,
Softmax, with seeded random weights. Input `image` [batch, 3, 16, 16] float32 (`batch` is a
free dimension), output `probs` [batch, 10].

Usage: python -m converter.zoo.models.make_tiny_cnn OUT.onnx [--seed N] [--opset N]; the zoo
(`source = "generated:make_tiny_cnn.py"`) calls `make(path, seed=, opset=)`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def make_tiny_cnn(seed: int = 0, opset: int = 13) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)

    def weight(name: str, *shape: int, scale: float) -> onnx.TensorProto:
        return numpy_helper.from_array(rng.normal(0.0, scale, shape).astype(np.float32), name)

    inits = [weight("conv1.w", 8, 3, 3, 3, scale=0.3), weight("conv1.b", 8, scale=0.1),
             weight("conv2.w", 16, 8, 3, 3, scale=0.15), weight("conv2.b", 16, scale=0.1),
             weight("fc.w", 10, 16 * 4 * 4, scale=0.05), weight("fc.b", 10, scale=0.1)]
    nodes = [
        helper.make_node("Conv", ["image", "conv1.w", "conv1.b"], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.w", "conv2.b"], ["c2"], name="conv2",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p2"], name="pool2", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Flatten", ["p2"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "tiny_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 16, 16])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=8, producer_name="webnn-converter/make_tiny_cnn")
    onnx.checker.check_model(model)
    return model


def make(path: Path, seed: int = 0, opset: int = 13) -> None:
    """Write the model to `path` (the zoo's generator entry point)."""
    onnx.save_model(make_tiny_cnn(seed, opset), path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--opset", type=int, default=13)
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save_model(make_tiny_cnn(args.seed, args.opset), args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
