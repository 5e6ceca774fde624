"""Tiny hostile models for the budget tests (`converter.core.budgets`): a few hundred bytes each
that ask for gigabytes of folded constants or millions of unrolled nodes. Each builder takes
the amount as an argument, so the same model in a moderate size shows that raising the budget
lets it through.

`HOSTILE` maps a case name to (builder of the hostile model, the budget it goes over, the
flag and value that let the moderate model `MODERATE[name]` through)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def _vi(name: str, shape: Sequence[int] | None, elem: int = TensorProto.FLOAT
        ) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes: list[onnx.NodeProto], inits: Sequence[onnx.TensorProto] = (), *,
           inputs: Sequence[onnx.ValueInfoProto] = (), outputs: Sequence[str] = ("y",),
           opset: int = OPSET, sparse: Sequence[onnx.SparseTensorProto] = ()
           ) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "hostile", list(inputs), [_vi(o, None) for o in outputs],
                              list(inits), sparse_initializer=list(sparse))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=8)


def _ints(name: str, values: Any) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values, np.int64), name)


def _floats(name: str, values: Any) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values, np.float32), name)


def constant_of_shape(rows: int) -> onnx.ModelProto:
    """y = ConstantOfShape([rows, 21000]) of float32 ones (rows=100000: 7.8 GiB)."""
    value = helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])
    return _model([helper.make_node("ConstantOfShape", ["s"], ["y"], name="n", value=value)],
                  [_ints("s", [rows, 21000])])


def expand(rows: int) -> onnx.ModelProto:
    """y = Expand([1.0], [rows, 21000])."""
    return _model([helper.make_node("Expand", ["x", "s"], ["y"], name="n")],
                  [_floats("x", [1.0]), _ints("s", [rows, 21000])])


def tile(repeats: int) -> onnx.ModelProto:
    """y = Tile([[1, 2, 3, 4]], [repeats, repeats])."""
    return _model([helper.make_node("Tile", ["x", "r"], ["y"], name="n")],
                  [_floats("x", [[1, 2, 3, 4]]), _ints("r", [repeats, repeats])])


def range_(limit: int) -> onnx.ModelProto:
    """y = Range(0, limit, 1) in float32 (then cast so that it stays a float output)."""
    return _model([helper.make_node("Range", ["a", "b", "d"], ["y"], name="n")],
                  [_floats("a", 0.0), _floats("b", float(limit)), _floats("d", 1.0)])


def pad(pads: int) -> onnx.ModelProto:
    """y = Pad([[1]], pads on both axes) (constant mode)."""
    return _model([helper.make_node("Pad", ["x", "p"], ["y"], name="n")],
                  [_floats("x", [[1.0]]), _ints("p", [pads, pads, pads, pads])])


def resize(scale: float) -> onnx.ModelProto:
    """y = Resize([1, 1, 2, 2], scales [1, 1, scale, scale]) (nearest)."""
    return _model([helper.make_node("Resize", ["x", "", "sc"], ["y"], name="n",
                                    mode="nearest")],
                  [_floats("x", np.ones((1, 1, 2, 2))), _floats("sc", [1, 1, scale, scale])])


def one_hot(depth: int) -> onnx.ModelProto:
    """y = OneHot(indices [0, 1, ..., 99], depth) (folded: every input is constant)."""
    return _model([helper.make_node("OneHot", ["i", "d", "v"], ["y"], name="n")],
                  [_ints("i", np.arange(100)), _ints("d", [depth]), _floats("v", [0, 1])])


def sparse_initializer(rows: int) -> onnx.ModelProto:
    """A sparse initializer [rows, 21000] with one value, densified when read; y = w + x."""
    values = _floats("w", [1.0])
    indices = _ints("w_idx", [0])
    sparse = helper.make_sparse_tensor(values, indices, [rows, 21000])
    return _model([helper.make_node("Identity", ["w"], ["y"], name="n")], sparse=[sparse])


def _counter_body(nodes: list[onnx.NodeProto], inits: Sequence[onnx.TensorProto] = ()
                  ) -> onnx.GraphProto:
    """Loop body (i, cond, acc) -> (cond, acc + 1) plus `nodes` before."""
    return helper.make_graph(
        [*nodes, helper.make_node("Add", ["acc", "one"], ["acc2"]),
         helper.make_node("Identity", ["cin"], ["cout"])], "body",
        [_vi("i", [], TensorProto.INT64), _vi("cin", [], TensorProto.BOOL), _vi("acc", [1])],
        [_vi("cout", [], TensorProto.BOOL), _vi("acc2", [1])],
        [_floats("one", [1.0]), *inits])


def loop(trip: int) -> onnx.ModelProto:
    """y = Loop(M=trip, no condition) of acc + 1 (2 body nodes)."""
    node = helper.make_node("Loop", ["M", "", "z"], ["y"], name="loop", body=_counter_body([]))
    return _model([node], [_ints("M", trip), _floats("z", [0.0])])


def nested_loops(trip: int) -> onnx.ModelProto:
    """Loop(M=trip) whose body runs another Loop(M=trip): trip**2 iterations."""
    inner = helper.make_node("Loop", ["M", "", "acc"], ["acc_in"], name="inner",
                             body=_counter_body([]))
    body = helper.make_graph(
        [inner, helper.make_node("Identity", ["acc_in"], ["acc2"]),
         helper.make_node("Identity", ["cin"], ["cout"])], "outer_body",
        [_vi("i", [], TensorProto.INT64), _vi("cin", [], TensorProto.BOOL), _vi("acc", [1])],
        [_vi("cout", [], TensorProto.BOOL), _vi("acc2", [1])])
    node = helper.make_node("Loop", ["M", "", "z"], ["y"], name="outer", body=body)
    return _model([node], [_ints("M", trip), _floats("z", [0.0])])


def nested_ifs(depth: int) -> onnx.ModelProto:
    """If(true) whose then-branch holds another If ... `depth` levels deep; y = x + 1."""
    def branch(level: int, name: str) -> onnx.GraphProto:
        if level == 0:
            nodes = [helper.make_node("Add", ["x", "one"], [name])]
        else:
            nodes = [helper.make_node("If", ["c"], [name], then_branch=branch(level - 1, "t"),
                                      else_branch=branch(0, "e"), name=f"if{level}")]
        return helper.make_graph(nodes, f"b{level}", [], [_vi(name, [1])])

    node = helper.make_node("If", ["c"], ["y"], name="if", then_branch=branch(depth - 1, "t"),
                            else_branch=branch(0, "e"))
    return _model([node], [numpy_helper.from_array(np.array(True), "c"),
                           _floats("one", [1.0])], inputs=[_vi("x", [1])])


def gru(steps: int) -> onnx.ModelProto:
    """A GRU over x [steps, 1, 4] with clip (decomposed: unrolled step by step)."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.normal(size=(1, 12, 4)).astype(np.float32), "W")
    r = numpy_helper.from_array(rng.normal(size=(1, 12, 4)).astype(np.float32), "R")
    node = helper.make_node("GRU", ["x", "W", "R"], ["", "y"], hidden_size=4, clip=5.0,
                            name="gru")
    return _model([node], [w, r], inputs=[_vi("x", [steps, 1, 4])], opset=14)


def tflite_while(limit: int) -> bytes:
    """A TFLite WHILE counting to `limit` (cond: i < limit; body: i + 1, x * 2)."""
    from tests.op_mappings.tflite.tflite_builder import ModelBuilder, S

    mb = ModelBuilder()
    x = mb.input("x", [2, 3])
    i0 = mb.const("i0", np.array(0, np.int32))
    i_out = mb.tensor("i_out", [], "int32")
    y = mb.output(mb.tensor("y", [2, 3]))
    cond = mb.subgraph("cond")
    ci = mb.input("i", [], "int32")
    mb.input("x", [2, 3])
    n = mb.const("limit", np.array(limit, np.int32))
    flag = mb.output(mb.tensor("flag", [], "bool"))
    mb.op("LESS", [ci, n], [flag])
    body = mb.subgraph("body")
    bi = mb.input("i", [], "int32")
    bx = mb.input("x", [2, 3])
    one = mb.const("one", np.array(1, np.int32))
    two = mb.const("two", np.full((2, 3), 2.0, np.float32))
    i2 = mb.output(mb.tensor("i2", [], "int32"))
    x2 = mb.output(mb.tensor("x2", [2, 3]))
    mb.op("ADD", [bi, one], [i2], S.AddOptionsT())
    mb.op("MUL", [bx, two], [x2], S.MulOptionsT())
    mb.use(0)
    o = S.WhileOptionsT()
    o.condSubgraphIndex, o.bodySubgraphIndex = cond, body
    mb.op("WHILE", [i0, x], [i_out, y], o)
    return mb.build()


Builder = Callable[[Any], onnx.ModelProto | bytes]

HOSTILE: dict[str, tuple[Builder, Any, str]] = {
    "constant_of_shape": (constant_of_shape, 100_000, "max_constant_bytes"),
    "expand": (expand, 100_000, "max_constant_bytes"),
    "tile": (tile, 50_000, "max_constant_bytes"),
    "range": (range_, 3_000_000_000, "max_constant_bytes"),
    "pad": (pad, 30_000, "max_constant_bytes"),
    "resize": (resize, 50_000.0, "max_constant_bytes"),
    "one_hot": (one_hot, 10_000_000, "max_constant_bytes"),
    "sparse_initializer": (sparse_initializer, 100_000, "max_constant_bytes"),
    "loop": (loop, 1_000_000_000, "max_trip_count"),
    "nested_loops": (nested_loops, 4096, "max_unrolled_nodes"),
    "nested_ifs": (nested_ifs, 24, "max_nesting"),
    "gru": (gru, 65_536, "max_recurrent_steps"),
    "tflite_while": (tflite_while, 1_000_000_000, "max_trip_count"),
}
"""name -> (builder, hostile amount, budget it goes over)."""

MODERATE: dict[str, tuple[Any, list[str]]] = {
    "constant_of_shape": (700, ["--max-constant-bytes", "200MB"]),
    "expand": (700, ["--max-constant-bytes", "200MiB"]),
    "tile": (2_000, ["--max-constant-bytes", "200MiB"]),
    "range": (15_000_000, ["--max-constant-bytes", "200MB"]),
    "pad": (1_000, ["--max-constant-bytes", "50MiB"]),
    "resize": (1_000.0, ["--max-constant-bytes", "20MiB"]),
    "one_hot": (20_000, ["--max-constant-bytes", "100MB"]),
    "sparse_initializer": (700, ["--max-constant-bytes", "100MiB"]),
    "loop": (5_000, ["--max-trip-count", "5000"]),
    "nested_loops": (60, ["--max-unrolled-nodes", "10000"]),
    "nested_ifs": (18, ["--max-nesting", "18"]),
    "gru": (300, ["--max-recurrent-steps", "300"]),
    "tflite_while": (300, ["--max-trip-count", "300"]),
}
"""name -> (a moderate amount over a lowered budget, the flags that let it through; the
constants stay under the 64 MiB a tiny file may derive, `--max-derived-bytes`)."""

LOWERED: dict[str, list[str]] = {
    "constant_of_shape": ["--max-constant-bytes", "100kB"],
    "expand": ["--max-constant-bytes", "100kB"],
    "tile": ["--max-constant-bytes", "100kB"],
    "range": ["--max-constant-bytes", "100kB"],
    "pad": ["--max-constant-bytes", "100kB"],
    "resize": ["--max-constant-bytes", "100kB"],
    "one_hot": ["--max-constant-bytes", "100kB"],
    "sparse_initializer": ["--max-constant-bytes", "100kB"],
    "loop": ["--max-trip-count", "4999"],
    "nested_loops": ["--max-unrolled-nodes", "1000"],
    "nested_ifs": ["--max-nesting", "17"],
    "gru": ["--max-recurrent-steps", "299"],
    "tflite_while": ["--max-trip-count", "299"],
}
"""name -> flags under which the moderate model is rejected (the budget really applies)."""


def save(name: str, amount: Any, folder: Any) -> Any:
    """Write case `name` with `amount` into `folder`; its path."""
    from pathlib import Path

    builder = HOSTILE[name][0]
    model = builder(amount)
    if isinstance(model, bytes):
        path = Path(folder) / f"{name}.tflite"
        path.write_bytes(model)
    else:
        path = Path(folder) / f"{name}.onnx"
        onnx.save_model(model, path)
    return path
