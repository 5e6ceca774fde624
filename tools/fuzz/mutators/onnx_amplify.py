"""ONNX amplification mutations (`amplify`): a node that asks for far more work or memory
than its bytes: deep or branching If nesting, functions doubling per level or calling
themselves, big derived constants (ConstantOfShape / Expand / Tile / Range, sparse dense
shapes)."""

from __future__ import annotations

import random

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

from tools.fuzz.mutators.base import Mutation

BIG_SHAPES = [[16384, 16384], [8192, 8192], [12000, 12000], [65536, 65536], [1 << 20, 4096],
              [100_000, 21_000]]
"""Shapes of derived constants: 256 MiB to 1 TiB of float32 from a few bytes of file."""


def _float_source(model: onnx.ModelProto) -> str:
    """A float value of the main graph to feed an added node (a new initializer if none)."""
    g = model.graph
    inits = {t.name for t in g.initializer}
    for vi in g.input:
        if vi.name not in inits and vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            return str(vi.name)
    g.initializer.append(numpy_helper.from_array(np.ones([1], np.float32), "amp_x"))
    return "amp_x"


def _local_opset(model: onnx.ModelProto) -> None:
    if not any(o.domain == "amp" for o in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid("amp", 1))


def _function(model: onnx.ModelProto, name: str, body: list[onnx.NodeProto]) -> None:
    model.functions.append(onnx.helper.make_function(
        "amp", name, ["a"], ["b"], body,
        [onnx.helper.make_opsetid("", 17), onnx.helper.make_opsetid("amp", 1)]))


def amplify(model: onnx.ModelProto, rng: random.Random, mut: Mutation) -> str | None:
    """Add a node that asks for far more work or memory than its bytes: a deep chain or a
    small balanced tree of If nodes, functions calling the previous one twice per level
    (2^levels nodes), functions calling themselves, a ConstantOfShape / Expand / Tile /
    Range of a big shape, a sparse initializer with a big dense shape."""
    from onnx import helper

    g = model.graph
    x = _float_source(model)
    how = rng.choice(["if-chain", "if-tree", "doubling", "recursive", "derived", "derived",
                      "sparse"])
    if how in ("if-chain", "if-tree"):
        depth = rng.choice([6, 12, 17, 20, 24] if how == "if-chain" else [6, 9, 11])
        g.initializer.append(numpy_helper.from_array(np.array(rng.random() < 0.5), "amp_c"))

        def branch(level: int, out: str) -> onnx.GraphProto:
            if level == 0:
                node = helper.make_node("Relu", [x], [out])
            else:
                other = branch(level - 1, out) if how == "if-tree" else branch(0, out)
                node = helper.make_node("If", ["amp_c"], [out],
                                        then_branch=branch(level - 1, out), else_branch=other)
            return helper.make_graph([node], f"amp{level}", [],
                                     [helper.make_tensor_value_info(out, TensorProto.FLOAT,
                                                                    None)])

        g.node.append(helper.make_node("If", ["amp_c"], ["amp_y"], name="amp_if",
                                       then_branch=branch(depth - 1, "amp_t"),
                                       else_branch=branch(depth - 1, "amp_e")))
        return f"{how}:{depth}"
    if how in ("doubling", "recursive"):
        _local_opset(model)
        if how == "doubling":
            levels = rng.choice([8, 16, 24, 40])
            _function(model, "F0", [helper.make_node("Relu", ["a"], ["b"])])
            for k in range(1, levels + 1):
                _function(model, f"F{k}", [
                    helper.make_node(f"F{k - 1}", ["a"], ["m"], domain="amp"),
                    helper.make_node(f"F{k - 1}", ["m"], ["b"], domain="amp")])
            top = f"F{levels}"
        else:
            levels = rng.choice([1, 2, 3])
            for k in range(levels):
                callee = f"R{(k + 1) % levels}"
                _function(model, f"R{k}", [
                    helper.make_node(callee, ["a"], ["m"], domain="amp"),
                    helper.make_node(callee, ["m"], ["b"], domain="amp")])
            top = "R0"
        g.node.append(helper.make_node(top, [x], ["amp_y"], domain="amp", name="amp_call"))
        return f"{how}:{levels}"
    shape = rng.choice(BIG_SHAPES)
    if how == "sparse":
        values = numpy_helper.from_array(np.ones([1], np.float32), "amp_w")
        indices = numpy_helper.from_array(np.zeros([1], np.int64), "amp_w_idx")
        g.sparse_initializer.append(helper.make_sparse_tensor(values, indices, shape))
        g.node.append(helper.make_node("Identity", ["amp_w"], ["amp_y"], name="amp_id"))
        return f"sparse:{shape}"
    op = rng.choice(["ConstantOfShape", "Expand", "Tile", "Range"])
    g.initializer.append(numpy_helper.from_array(np.array(shape, np.int64), "amp_s"))
    if op == "ConstantOfShape":
        node = helper.make_node(op, ["amp_s"], ["amp_y"], name="amp_n",
                                value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]))
    elif op == "Expand":
        g.initializer.append(numpy_helper.from_array(np.ones([1], np.float32), "amp_one"))
        node = helper.make_node(op, ["amp_one", "amp_s"], ["amp_y"], name="amp_n")
    elif op == "Tile":
        g.initializer.append(numpy_helper.from_array(np.ones([1, 1], np.float32), "amp_one"))
        node = helper.make_node(op, ["amp_one", "amp_s"], ["amp_y"], name="amp_n")
    else:
        g.initializer.extend([numpy_helper.from_array(np.array(v, np.float32), f"amp_{k}")
                              for k, v in (("a", 0.0), ("b", float(shape[0] * shape[1])),
                                           ("d", 1.0))])
        node = helper.make_node(op, ["amp_a", "amp_b", "amp_d"], ["amp_y"], name="amp_n")
    g.node.append(node)
    if rng.random() < 0.5:  # make it an output, so that nothing can skip it
        g.output.append(helper.make_tensor_value_info("amp_y", TensorProto.FLOAT, None))
    return f"{op}:{shape}"
