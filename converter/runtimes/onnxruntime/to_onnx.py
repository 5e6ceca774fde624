"""Lower a WebNN `MLGraph` to a standard ONNX model.

`to_onnx(graph, opset=21)` emits one or a few default-domain ONNX ops per WebNN op (the
lowerings live in `converter.runtimes.onnxruntime.lowering`, one module per op family, keyed by spec
op name), constants as initializers, and graph inputs/outputs named exactly like the WebNN
graph's (any string survives); internal values get short fresh names (`v<n>`) and nodes
none, so naming costs a few bytes per node (`readable_names=True`: descriptive names, for
debugging). The file holds no doc strings or value_info.

Size (`compact=True`, the default): initializers no node reads are dropped, and constants of
more than `COMPACT_MIN_BYTES` (256) bytes that are splats or broadcasts of a smaller array
are written as ConstantOfShape or small initializer + Expand (`lowering.compact`), so
the ONNX "light" models, whose weights are ConstantOfShape splats, export at about their own
size. onnxruntime folds these nodes back into initializers at session creation: the
onnxruntime backend, which runs this lowering, gets the same session and the same results. The result
reproduces WebNN semantics exactly where ONNX allows it: see each lowering module's docstring
for the details (float16 computed in float32, integer widening where onnxruntime lacks
kernels, index clamping, pooling padding exclusion, ...).

ONNX value names are unique across inputs and outputs while WebNN keeps them apart: an output
whose name is also an input name is exported as `<name>__output` (made unique), and the
metadata entry "webnn_output_names" (a JSON list, in graph-output order) records the WebNN
names; `onnx_output_names(graph)` gives the exported names.

Speed (`fuse=True`, the default): chains of constant affine float32 operations become one
BatchNormalization or Mul + Add, and redundant Reshapes are removed (`lowering.fusion`);
single lowerings pick the patterns onnxruntime runs fastest where they are exact (constant
batchNormalization as Add/Mul/Add that onnxruntime folds into a preceding Conv, prelu
without onnxruntime's slow PRelu kernel, Conv1d-like conv2d as a 1-D Conv), converted
subgraphs become the ONNX ops onnxruntime fuses (`lowering.patterns`:
DynamicQuantizeLinear + MatMulInteger, the RMS and skip layer normalization forms), and
nodes whose results nothing reads are removed (`fusion.remove_dead_nodes`, always).

onnxruntime's contrib kernels (`contrib_ops=True`, set by the onnxruntime backend only; the
standard export stays standard ONNX): the importer's decompositions of com.microsoft
GroupQueryAttention and Attention are re-fused into those nodes (`lowering.contrib`,
one module per pattern, each matched structurally with every constant checked), as
onnxruntime runs them in one kernel where it would run dozens of small nodes.

float16 chains (`float16_chains=True`, set by the onnxruntime backend only): chains of float16
operations computed in float32 stay in float32 between them and are rounded to float16 where
a value leaves the chain (`lowering.float16_chains`), so onnxruntime sees (and fuses)
float32 arithmetic instead of a Cast pair around every operation.

Restrictions: opset 21 or newer (blocked quantization, Gelu, AveragePool dilations); an op
without a lowering raises `MLOperationError` naming it.
"""

from __future__ import annotations

import json

import numpy as np
import onnx
from onnx import helper

from converter.core.webnn.context import MLGraph
from converter.core.webnn.errors import MLOperationError
from converter.runtimes.onnxruntime.lowering import LOWERINGS, Emitter
from converter.runtimes.onnxruntime.lowering.compact import compact_constants, prune_initializers
from converter.runtimes.onnxruntime.lowering.compact_forms import COMPACT_MIN_BYTES
from converter.runtimes.onnxruntime.lowering.context import ONNX_TYPES
from converter.runtimes.onnxruntime.lowering.contrib import (
    CONTRIB_DOMAIN,
    emit_contrib,
    plan_contrib,
)
from converter.runtimes.onnxruntime.lowering.float16_chains import (
    keep_float16_chains,
    rounding_casts,
)
from converter.runtimes.onnxruntime.lowering.fusion import (
    emit_affine,
    plan_affine_chains,
    remove_dead_nodes,
    simplify_reshapes,
)

MIN_OPSET = 21


def to_onnx(graph: MLGraph, *, opset: int = 21, fuse: bool = True, compact: bool = True,
            readable_names: bool = False, contrib_ops: bool = False,
            float16_chains: bool = False) -> onnx.ModelProto:
    """The ONNX model computing `graph` (inputs and outputs keep their WebNN names).

    `fuse`: emit chains of constant affine float32 operations as one affine map (rounds once
    per emitted node instead of once per operation) and remove redundant Reshapes (see
    `lowering.fusion`).
    `compact`: write constants of more than `COMPACT_MIN_BYTES` bytes that are splats or
    broadcasts of a smaller array as ConstantOfShape / small initializer + Expand (same
    values, bit for bit; see `lowering.compact`). Unused initializers are dropped
    either way.
    `readable_names`: name internal values and nodes after their WebNN operation and ONNX op
    type (e.g. `conv2d0_Conv_25`) instead of `v<n>` and unnamed nodes (same computation).
    `contrib_ops`: also re-fuse the importer's decompositions of onnxruntime's com.microsoft
    ops into those ops (`lowering.contrib`; the onnxruntime backend sets it): the model
    then runs in onnxruntime only.
    `float16_chains`: compute chains of float16 operations in float32 end to end, rounding to
    float16 only where a value leaves the chain (graph outputs, operators run natively in
    float16, explicit casts) instead of after every operation (`lowering.float16_chains`;
    the onnxruntime backend sets it): more accurate than WebNN's per-operation rounding,
    never less, but not bit-exact to it.
    """
    max_opset = onnx.defs.onnx_opset_version()
    if not MIN_OPSET <= opset <= max_opset:
        raise ValueError(f"to_onnx: opset must lie in [{MIN_OPSET}, {max_opset}], got {opset}")
    missing = sorted({op.op for op in graph.operations if op.op not in LOWERINGS})
    if missing:
        raise MLOperationError(f"ONNX export: no lowering for {', '.join(missing)}")
    e = Emitter(opset, reserved=[*graph.inputs, *graph.outputs, *onnx_output_names(graph)],
                compact_min_bytes=COMPACT_MIN_BYTES if compact else None,
                readable_names=readable_names)
    inputs = []
    for name, operand in graph.inputs.items():
        e.declare(name, operand.data_type)
        e.bind(operand, name)
        inputs.append(helper.make_tensor_value_info(name, ONNX_TYPES[operand.data_type],
                                                    list(operand.shape)))
    for operand in graph.constants:
        name = e.fresh("constant")
        assert operand.value is not None
        e.add_initializer(np.asarray(operand.value), name, operand.data_type)
        e.declare(name, operand.data_type)
        e.bind(operand, name)
    chains = plan_affine_chains(graph) if fuse else {}
    fused = {i for chain in chains.values() for i in chain.ops[:-1]}
    contrib = plan_contrib(graph, float16=float16_chains) if contrib_ops else {}
    contrib_outputs: dict[int, list[str]] = {}
    rounding: set[str] = set()  # float16 values that round a float32 result
    explicit: set[str] = set()  # outputs of WebNN casts from float16
    for i, op in enumerate(graph.operations):
        if i in fused:  # computed by the chain's last operation
            continue
        label = op.options.get("label")
        first = len(e.nodes)
        e.current = f"{op.op}{i}" + (f"_{label}" if label else "")
        if i in contrib:
            match, slot = contrib[i]
            if id(match) not in contrib_outputs:
                contrib_outputs[id(match)] = emit_contrib(e, match)
            names = [contrib_outputs[id(match)][slot]]
        elif i in chains:
            names = [emit_affine(e, chains[i])]
        else:
            names = list(LOWERINGS[op.op](e, op))
        if len(names) != len(op.outputs):
            raise MLOperationError(f"ONNX export: {op.op}: lowering produced {len(names)} "
                                   f"outputs, expected {len(op.outputs)}")
        for out, name in zip(op.outputs, names, strict=True):
            if e.dtype(name) != out.data_type:
                raise MLOperationError(f"ONNX export: {op.op}: lowering produced "
                                       f"{e.dtype(name)}, expected {out.data_type}")
            e.bind(out, name)
        if float16_chains and op.op == "cast":
            explicit.update(names)
        elif float16_chains:
            rounding |= rounding_casts(e, e.nodes[first:], names)
    if float16_chains:
        keep_float16_chains(e, rounding, explicit)
    out_names = onnx_output_names(graph)
    _name_outputs(e, graph, out_names)
    remove_dead_nodes(e, keep=set(out_names))
    if fuse:
        simplify_reshapes(e, keep={*graph.inputs, *out_names})
    prune_initializers(e, keep=out_names)
    if compact:
        compact_constants(e, COMPACT_MIN_BYTES)
    outputs = [helper.make_tensor_value_info(name, ONNX_TYPES[o.data_type], list(o.shape))
               for name, o in zip(out_names, graph.outputs.values(), strict=True)]
    body = helper.make_graph(e.nodes, "webnn_graph", inputs, outputs)
    opsets = [helper.make_opsetid("", opset)]
    ir_version = helper.find_min_ir_version_for(opsets)
    if any(node.domain == CONTRIB_DOMAIN for node in e.nodes):
        opsets.append(helper.make_opsetid(CONTRIB_DOMAIN, 1))
    model = helper.make_model(body, opset_imports=opsets, producer_name="webnn-converter")
    # Moved in one at a time (each copied, then freed): make_graph + make_model would hold
    # three copies of the weights at once.
    initializers, e.initializers = e.initializers, []
    initializers.reverse()
    while initializers:
        model.graph.initializer.append(initializers.pop())
    model.ir_version = ir_version
    helper.set_model_props(model, {"webnn_output_names": json.dumps(list(graph.outputs))})
    return model


def onnx_output_names(graph: MLGraph) -> list[str]:
    """The ONNX names of the graph's outputs, in order: the WebNN names, except that names
    also used by an input get the suffix "__output" (plus a number when still taken)."""
    taken = set(graph.inputs) | set(graph.outputs)
    names = []
    for name in graph.outputs:
        if name in graph.inputs:
            new, i = f"{name}__output", 1
            while new in taken:
                i += 1
                new = f"{name}__output{i}"
            taken.add(new)
            name = new
        names.append(name)
    return names


def _name_outputs(e: Emitter, graph: MLGraph, out_names: list[str]) -> None:
    """Give each graph output its WebNN name: rename the producing node's output the first
    time a value is used as an output, and add an Identity otherwise (inputs, initializers,
    and values exported under several names)."""
    produced = {name for node in e.nodes for name in node.output}
    final: dict[str, str] = {}
    for out_name, operand in zip(out_names, graph.outputs.values(), strict=True):
        value = e.value(operand)
        if value in produced and value not in final:
            e.rename_everywhere(value, out_name)
            final[value] = out_name
        else:
            source = final.get(value, value)
            e.nodes.append(helper.make_node("Identity", [source], [out_name],
                                            name=e.node_name("n_output_Identity")))
