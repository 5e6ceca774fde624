"""float16 chains kept in float32, for the onnxruntime backend only (`to_onnx(...,
float16_chains=True)`); the standard ONNX export keeps WebNN's per-operation rounding.

onnxruntime's CPU provider lacks float16 kernels for most operators, so the lowerings compute
an inexact float16 operation in float32 and round its result to float16 (`context.lift`): a
float16 graph becomes float32 arithmetic with a Cast pair (round to float16, back to float32)
between every two operations. This pass removes those pairs inside a chain: where the next
float32 computation reads a float16 value that is the rounding of a float32 value, it reads
the float32 value itself, and data movement (Reshape, Transpose, Split, Slice, Gather,
Concat, Where, ...) of such a value is done on the float32 value, so that chains of float16
operations run in float32 end to end. A float16 value is rounded where it leaves the chain:
graph outputs, operators that run natively in float16 (max, min, relu, comparisons, ...: they
read the rounded value) and explicit WebNN casts (a cast from float16 reads the rounded value;
a cast to float16 always rounds). The result is never less accurate than per-operation
rounding (each intermediate rounding is dropped, none is added), and onnxruntime then sees
the float32 graph it fuses (attention, layer normalization, Gelu, ...).

Which Casts are roundings: the float32 → float16 Casts that produce a WebNN operation's
output (`rounding`, collected by `to_onnx`), never those of an explicit WebNN cast
(`explicit`: their outputs keep reading rounded values).
"""

from __future__ import annotations

from collections.abc import Iterable

from onnx import NodeProto, TensorProto, helper

from converter.runtimes.onnxruntime.lowering.context import Emitter

F16, F32 = "float16", "float32"

#: ONNX operators that only move, select or copy elements, and which of their inputs are the
#: data (None: all): on float16 data they give the same values when run on the float32 value
#: and rounded afterwards.
MOVEMENT: dict[str, tuple[int, ...] | None] = {
    "Reshape": (0,), "Transpose": (0,), "Squeeze": (0,), "Unsqueeze": (0,), "Flatten": (0,),
    "Identity": (0,), "Slice": (0,), "Split": (0,), "Expand": (0,), "Tile": (0,),
    "Gather": (0,), "GatherElements": (0,), "GatherND": (0,), "Concat": None,
    "Where": (1, 2),
}


def rounding_casts(e: Emitter, nodes: Iterable[NodeProto], names: Iterable[str]) -> set[str]:
    """Those of `names` (a WebNN operation's output values) that a Cast float32 → float16
    among `nodes` (the nodes its lowering emitted) produces."""
    wanted = {n for n in names if e.dtype(n) == F16}
    return {node.output[0] for node in nodes
            if node.op_type == "Cast" and node.output[0] in wanted
            and e.dtype(node.input[0]) == F32}


def keep_float16_chains(e: Emitter, rounding: set[str], explicit: set[str]) -> None:
    """Rewrite `e.nodes` so that float32 computations read the float32 value of a float16
    rounding (see the module docstring). `rounding`: float16 values produced by a rounding
    Cast; `explicit`: outputs of explicit WebNN casts, left reading rounded values. Casts
    and copies nothing reads are left for `fusion.remove_dead_nodes`."""
    wide: dict[str, str] = {}  # float16 value -> the float32 value it rounds
    renamed: dict[str, str] = {}  # Cast float16 -> float32 output -> the float32 value
    out: list[NodeProto] = []
    for node in e.nodes:
        for i, name in enumerate(node.input):
            if name in renamed:
                node.input[i] = renamed[name]
        if node.op_type == "Cast" and len(node.input) == 1:
            src, dst = node.input[0], node.output[0]
            if dst in rounding and e.dtype(src) == F32 and e.dtype(dst) == F16:
                wide[dst] = src
            elif (src in wide and e.dtype(dst) == F32 and dst not in explicit):
                renamed[dst] = wide[src]
            out.append(node)
            continue
        data = MOVEMENT.get(node.op_type, ())
        idx = [i for i in (range(len(node.input)) if data is None else data)
               if i < len(node.input) and node.input[i]]
        if (not idx or not any(node.input[i] in wide for i in idx)
                or any(e.dtype(node.input[i]) != F16 for i in idx)
                or any(e.dtype(o) != F16 for o in node.output)):
            out.append(node)
            continue
        inputs = list(node.input)
        for i in idx:
            if inputs[i] not in wide:  # a float16 value without one: widened exactly
                up = e.fresh("widen_Cast")
                e.declare(up, F32)
                out.append(helper.make_node("Cast", [inputs[i]], [up], to=TensorProto.FLOAT,
                                            name=e.node_name("n_widen_Cast")))
                wide[inputs[i]] = up
            inputs[i] = wide[inputs[i]]
        outs = [e.fresh(f"wide_{node.op_type}") for _ in node.output]
        for name in outs:
            e.declare(name, F32)
        copy = helper.make_node(node.op_type, inputs, outs, name=node.name,
                                domain=node.domain or None)
        copy.attribute.extend(node.attribute)
        out.append(copy)
        for o16, o32 in zip(node.output, outs, strict=True):
            out.append(helper.make_node("Cast", [o32], [o16], to=TensorProto.FLOAT16,
                                        name=e.node_name("n_round_Cast")))
            wide[o16] = o32
    e.nodes[:] = out
