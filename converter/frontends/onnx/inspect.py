"""`inspect` for ONNX: inputs/outputs as declared, free dimensions with the settings that fix
them, shape/control inputs with the pins that fix them, op histogram with support status
("supported", "inlined" through a function body, "unsupported").

The shape/control analysis (`converter.frontends.control_inputs`) sees ONNX through
`graph_view`: the conversion-time slots of a node are its handler's `const_inputs` plus the
If condition, the Loop trip count and condition, and the Resize/Upsample roi, scales and
sizes; Shape and Size read only shapes; Equal/Less/Greater(OrEqual) are the comparisons
whose scalar constants become suggested pin values.

The op histogram counts every node the conversion would meet: the main graph's, those of
If/Loop/Scan bodies (at any depth) and those of the model-local functions the graph calls
(once per call), so that an unsupported op inside a branch or a function is listed too.

Restrictions: the shape/control analysis sees the main graph only; external data is not
loaded (an input compared with an external constant gets no suggested value).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from converter.core.fixes import Fix
from converter.frontends.base import ModelInfo, TensorSummary, ops_histogram
from converter.frontends.control_inputs import GraphNode, GraphView
from converter.frontends.free_dims import DimKey, batch_defaults, fixes_for

CONTROL_SLOTS: dict[str, frozenset[int]] = {
    "If": frozenset({0}), "Loop": frozenset({0, 1}), "Upsample": frozenset({1}),
}
"""Input positions that steer control flow or sizes although no handler lists them in
`const_inputs` (Resize: see `_slots`)."""
SHAPE_OPS = frozenset({"Shape", "Size"})
COMPARE_OPS = frozenset({"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"})


def _slots(node: GraphNode) -> frozenset[int]:
    from op_mappings.onnx import lookup

    handler = lookup(node.op_type, node.domain, node.version)
    slots = set(handler.const_inputs) if handler is not None else set()
    if node.domain == "":
        slots |= CONTROL_SLOTS.get(node.op_type, frozenset())
        if node.op_type == "Resize":
            slots |= {1} if node.version < 11 else {1, 2, 3}
    return frozenset(slots)


def _captures(node: Any) -> tuple[str, ...]:
    """Names the subgraph bodies of a NodeProto read (outer values they may capture)."""
    import onnx

    refs: list[str] = []
    for attr in node.attribute:
        graphs = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)
        for g in graphs:
            for inner in g.node:
                refs.extend(i for i in inner.input if i)
                refs.extend(_captures(inner))
    return tuple(dict.fromkeys(refs))


def graph_view(nodes: Any, opsets: Mapping[str, int], inputs: Collection[str],
               outputs: Collection[str], constant: Callable[[str], np.ndarray | None]
               ) -> GraphView:
    """The analysis view of a graph's NodeProtos (`nodes`, topological order)."""
    view_nodes = []
    for index, n in enumerate(nodes):
        domain = "" if n.domain in ("", "ai.onnx") else n.domain
        view_nodes.append(GraphNode(n.name or f"{n.op_type}_{index}", n.op_type, domain,
                                    int(opsets.get(domain, 0)), tuple(n.input),
                                    tuple(n.output), _captures(n)))
    return GraphView(view_nodes, list(inputs), list(outputs), _slots, SHAPE_OPS, COMPARE_OPS,
                     constant)


def source_view(source: Any) -> GraphView:
    """The analysis view of a `SourceGraph` the ONNX reader made (its nodes keep their
    NodeProtos)."""
    consts = source.constants
    nodes = [GraphNode(n.name, n.op_type, n.domain, n.version, n.inputs, n.outputs,
                       _captures(n.proto) if n.proto is not None else ())
             for n in source.nodes]
    return GraphView(nodes, [vi.name for vi in source.inputs],
                     [vi.name for vi in source.outputs], _slots, SHAPE_OPS, COMPARE_OPS,
                     consts.get)


def proto_view(proto: Any) -> GraphView:
    """The analysis view of a ModelProto's main graph (initializers and Constant nodes are
    decoded on demand; external data is not read)."""
    from onnx import numpy_helper

    graph = proto.graph
    opsets = {("" if e.domain in ("", "ai.onnx") else e.domain): int(e.version)
              for e in proto.opset_import}
    init = {t.name: t for t in graph.initializer}
    const_nodes = {n.output[0]: n for n in graph.node
                   if n.op_type == "Constant" and n.domain in ("", "ai.onnx") and n.output}

    def constant(name: str) -> np.ndarray | None:
        try:
            if name in init:
                return numpy_helper.to_array(init[name])
            node = const_nodes.get(name)
            if node is not None:
                for attr in node.attribute:
                    if attr.name == "value":
                        return numpy_helper.to_array(attr.t)
                    if attr.name in ("value_int", "value_float"):
                        return np.asarray(attr.i if attr.name == "value_int" else attr.f)
        except Exception:  # noqa: BLE001 - external or odd data: no suggestion
            return None
        return None

    inputs = [vi.name for vi in graph.input if vi.name not in init]
    return graph_view(graph.node, opsets, inputs, [vi.name for vi in graph.output], constant)


def inspect_onnx(model: str | os.PathLike[str] | bytes) -> ModelInfo:
    from converter.frontends.onnx.inputs import implied_sizes, value_info
    from converter.frontends.onnx.reader import load_proto, model_functions
    from converter.frontends.onnx.sizing import size_model
    from converter.frontends.onnx.subgraph import schema_functions
    from op_mappings.onnx import handlers, lookup

    proto, _, label = load_proto(model if not isinstance(model, Path) else str(model))
    size_model(proto, label)  # recursion, nesting and node counts bound the walk below
    graph = proto.graph
    opsets: dict[str, int] = {}
    for entry in proto.opset_import:
        opsets["" if entry.domain in ("", "ai.onnx") else entry.domain] = int(entry.version)
    init = {t.name for t in graph.initializer}
    inputs = []
    for vi in graph.input:
        if vi.name in init:
            continue
        info = value_info(vi)
        inputs.append(TensorSummary(info.name, info.dtype, info.shape))
    outputs = tuple(TensorSummary(i.name, i.dtype, i.shape)
                    for i in (value_info(vi) for vi in graph.output))
    free: list[str] = []
    for t in inputs:
        if t.shape is None:
            free.append(f"{t.name} (unknown rank)")
        for i, d in enumerate(t.shape or ()):
            if isinstance(d, str):
                if d not in free:
                    free.append(d)
            elif d is None:
                free.append(f"{t.name}[{i}]")
    functions = model_functions(proto)
    sinces: dict[tuple[str, str], list[int]] = {}
    for h in handlers():
        sinces.setdefault((h.domain, h.op_type), []).append(h.since)

    def status(op: str, domain: str, version: int) -> tuple[str, str]:
        if lookup(op, domain, version) is not None:
            return "supported", ""
        if (domain, op) in functions:
            return "inlined", "model-local function"
        try:
            schema = schema_functions(op, version, domain)
            if schema.has_function or schema.has_context_dependent_function:
                return "inlined", "schema function body"
        except Exception:  # noqa: BLE001 - unknown op or domain
            pass
        known = sinces.get((domain, op))
        if known:
            return "unsupported", f"handlers exist from opset {min(known)}"
        return "unsupported", "no handler"

    nodes = _all_nodes(graph.node, opsets, functions,
                       lambda op, domain, version: lookup(op, domain, version) is not None)
    producer = f"{proto.producer_name} {proto.producer_version}".strip()
    shapes = [(t.name, t.shape) for t in inputs]
    batches = batch_defaults(shapes)
    implied = implied_sizes(proto, [value_info(vi) for vi in graph.input if vi.name not in init])
    return ModelInfo(label, "onnx", producer, opsets, tuple(inputs), outputs, tuple(free),
                     ops_histogram(nodes, status),
                     fixes=tuple(f for f in fixes_for(shapes, suggested=implied)
                                 if _key(f) not in batches),
                     defaults=tuple(batches.values()), defaults_why="taken as a batch",
                     control_inputs=proto_view(proto).control_inputs())


def _key(fix: Fix) -> DimKey:
    return fix.name if fix.axis is None else (fix.name, fix.axis)


def _all_nodes(nodes: Any, opsets: Mapping[str, int], functions: Mapping[tuple[str, str], Any],
               handled: Callable[[str, str, int], bool], depth: int = 0
               ) -> list[tuple[str, str, int]]:
    """(op type, domain, version) of `nodes`, of the nodes of their subgraphs and of the
    model-local functions they call without a handler of their own (each call counts the
    body once; recursion stops at 64 levels)."""
    import onnx

    out: list[tuple[str, str, int]] = []
    if depth > 64:
        return out
    for n in nodes:
        domain = "" if n.domain in ("", "ai.onnx") else n.domain
        version = int(opsets.get(domain, 0))
        out.append((n.op_type, domain, version))
        for attr in n.attribute:
            graphs = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)
            for g in graphs:
                out += _all_nodes(g.node, opsets, functions, handled, depth + 1)
        fn = functions.get((domain, n.op_type))
        if fn is not None and not handled(n.op_type, domain, version):
            inner = {("" if e.domain in ("", "ai.onnx") else e.domain): int(e.version)
                     for e in fn.opset_import}
            out += _all_nodes(fn.node, {**opsets, **inner}, functions, handled, depth + 1)
    return out

