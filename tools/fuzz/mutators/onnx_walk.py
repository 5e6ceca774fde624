"""Walking an ONNX model for the structure-aware mutators: every graph (the main one, If /
Loop / Scan bodies, function bodies), node, tensor (initializers, Constant values, sparse
values and indices, tensor attributes) and value name, and the attributes of given types;
plus the value tables the mutators draw from (op types, domains, data types)."""

from __future__ import annotations

import onnx
from onnx import AttributeProto

A = AttributeProto
OP_TYPES = ["Conv", "Relu", "Add", "Gemm", "MatMul", "Reshape", "Loop", "If", "Scan",
            "ConstantOfShape", "Expand", "Tile", "Range", "Pad", "Resize", "OneHot", "Gather",
            "Slice", "Concat", "Split", "Transpose", "Softmax", "LSTM", "GRU", "Einsum",
            "NonZero", "Unique", "TopK", "CumSum", "Constant", "Identity", "Cast", "Where",
            "QuantizeLinear", "DequantizeLinear", "Attention", "SequenceConstruct",
            "Frobnicate", "conv", ""]
DOMAINS = ["", "ai.onnx", "com.microsoft", "ai.onnx.ml", "local", "bogus.domain",
           "com.microsoft.nchwc", "\n"]
DTYPES = [0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 19, 21, 22, 23, 24, 25,
          99, -1]
NUM_FIELDS = ("float_data", "int32_data", "int64_data", "double_data", "uint64_data",
              "string_data")


def graphs(model: onnx.ModelProto) -> list[onnx.GraphProto]:
    """The main graph and every subgraph (attributes of type GRAPH / GRAPHS), depth first."""
    out: list[onnx.GraphProto] = []

    def walk(g: onnx.GraphProto) -> None:
        out.append(g)
        for n in g.node:
            for a in n.attribute:
                if a.type == A.GRAPH:
                    walk(a.g)
                elif a.type == A.GRAPHS:
                    for sub in a.graphs:
                        walk(sub)

    walk(model.graph)
    return out


def nodes(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    return [n for g in graphs(model) for n in g.node] + \
        [n for f in model.functions for n in f.node]


def tensors(model: onnx.ModelProto) -> list[onnx.TensorProto]:
    out: list[onnx.TensorProto] = []
    for g in graphs(model):
        out += list(g.initializer)
        for s in g.sparse_initializer:
            out += [s.values, s.indices]
    for n in nodes(model):
        for a in n.attribute:
            if a.type == A.TENSOR:
                out.append(a.t)
            elif a.type == A.TENSORS:
                out += list(a.tensors)
    return out


def value_names(g: onnx.GraphProto) -> list[str]:
    names = [v.name for v in g.input] + [v.name for v in g.output] + \
        [t.name for t in g.initializer]
    for n in g.node:
        names += [x for x in n.output if x]
    return names


def attributes_of(model: onnx.ModelProto, types: tuple[int, ...]
           ) -> list[tuple[onnx.NodeProto, onnx.AttributeProto]]:
    return [(n, a) for n in nodes(model) for a in n.attribute if a.type in types]
