"""Splitting an ONNX model with a data-dependent tail into one static WebNN graph plus host
steps (`converter.results.host_steps`, docs/host-steps.md).

Two passes. The first is the ordinary import (`convert` tries it first). When it fails and
every failure is data-dependent:

- a node of an op whose output shape depends on its input values (`DATA_DEPENDENT_OPS`:
  NonZero, NonMaxSuppression, Compress, Unique), or
- a node whose handler needs a conversion-time constant that is not one and that no pinned
  input would make one (`RequiresConstantInput` without a `pin_inputs` fix: TopK with a
  run-time k, Reshape/Expand/Tile/Slice/Resize/ConstantOfShape/Range/Pad/OneHot/... whose size
  is computed from data; a size that comes from shape/control inputs keeps failing with the
  `pin_inputs` hint, as WebNN can compute the rest once they are pinned), or
- a node downstream of one of those,

the host set is those nodes plus every node that reads their outputs, directly or not. The
second pass imports the rest of the source graph (`split_convert`) with the model outputs it
computes plus the "boundary" values the host nodes read as graph outputs; the host nodes
become `HostSteps` in source order, reading the boundary values, the model inputs they use and
the constants they use (initializers, Constant nodes, pinned inputs, and boundary values the
import folded: a folded boundary value is a host constant, not a graph output). After the
graph passes, `with_boundary_casts` puts a Cast host step behind each boundary value the graph
gives in another type than the source's (bool carried as uint8, int64 narrowed to int32 by a
target, float64 computed as float32), so the host steps see the source types.

Restrictions: ONNX sources only; a host node (and every node of an `If` branch among them)
must be of the default ONNX domain and not Loop or Scan: `ConversionFailed` naming the node
otherwise (the first pass's error
when that node failed itself). Failures that are not data-dependent and not downstream of
one still fail the conversion with the first pass's error, which lists every failure as
without host steps. A model whose second pass fails (e.g. nothing is left for the WebNN graph to
compute: every model output depends on a data-dependent value and the graph would return
nothing) fails with the first pass's error. The model is read a second time for the second
pass.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from converter.core.budgets import active
from converter.core.errors import (
    ConversionError,
    ConversionFailed,
    RequiresConstantInput,
    UnsupportedOp,
)
from converter.core.ir import Node, SourceGraph, ValueInfo
from converter.core.webnn import MLOperand
from converter.frontends.onnx.frontend import import_source
from converter.frontends.onnx.reader import read_onnx
from converter.frontends.onnx.state import state_pairs
from converter.importer import ImportObserver
from converter.importer.context import ImportContext
from converter.results.host_steps import (
    DATA_TYPES,
    REFUSED,
    HostGraph,
    HostInput,
    HostNode,
    HostSteps,
    HostStepsError,
)
from converter.results.result import ConversionResult
from converter.results.state import state_notes

__all__ = ["DATA_DEPENDENT_OPS", "host_nodes", "split_convert", "with_boundary_casts"]

DATA_DEPENDENT_OPS = frozenset({"NonZero", "NonMaxSuppression", "Compress", "Unique"})
"""Ops of the default ONNX domain whose output shape depends on their input values."""

_READER_OPTIONS = ("free_dims", "input_shapes", "pin_inputs", "input_dims")


def _data_dependent(error: ConversionError, node: Node) -> bool:
    if isinstance(error, RequiresConstantInput) and not error.inner:
        return not any(f.option == "pin_inputs" for f in error.fixes)
    return isinstance(error, UnsupportedOp) and node.domain == "" \
        and node.op_type in DATA_DEPENDENT_OPS


def host_nodes(source: SourceGraph, errors: Sequence[ConversionError]
               ) -> tuple[list[Node], list[ConversionError]] | None:
    """The host set of `source` given the first import's `errors` (module docstring), in
    source order, and the errors that are not part of it (not data-dependent and not
    downstream of a data-dependent node); None when no error is data-dependent."""
    by_name = {n.name: n for n in source.nodes}
    roots = {e.node_name for e in errors
             if e.node_name in by_name and _data_dependent(e, by_name[e.node_name])}
    if not roots:
        return None
    tainted: set[str] = set()
    host: list[Node] = []
    for node in source.nodes:
        if node.name in roots or any(i in tainted for i in node_reads(node)):
            host.append(node)
            tainted.update(o for o in node.outputs if o)
    names = {n.name for n in host}
    others = [e for e in errors if e.node_name is not None and e.node_name not in names]
    return host, others


class _Boundary(ImportObserver):
    """Adds the boundary values to the second import's graph outputs; keeps those the
    import folded as constants and notes which are source bools."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = names
        self.constants: dict[str, np.ndarray] = {}
        self.graph: list[str] = []
        self.bools: set[str] = set()

    def graph_outputs(self, ctx: ImportContext, outputs: dict[str, MLOperand]
                      ) -> dict[str, MLOperand]:
        out = dict(outputs)
        for name in self.names:
            if name in ctx.consts:
                self.constants[name] = np.array(ctx.consts[name])
                continue
            self.graph.append(name)
            if ctx.is_bool(name):
                self.bools.add(name)
            if name not in out:
                operand = ctx.operand(name)
                out[name] = operand if operand.kind == "output" \
                    else ctx.builder.identity(operand)
        return out


def split_convert(model: Any, failed: ConversionFailed, options: Mapping[str, Any]
                  ) -> tuple[ConversionResult, dict[str, str]]:
    """The `ConversionResult` of ONNX `model` as one WebNN graph plus host steps, given the
    first import's failure `failed` (raised again when no failure is data-dependent, and a
    `ConversionFailed` of the other failures when there are some), and {boundary value:
    source data type} for `with_boundary_casts`. `options` are the front end's (reader
    options and `budgets`)."""
    reader = {k: v for k, v in options.items() if k in _READER_OPTIONS}
    source = read_onnx(model, **reader)
    split = host_nodes(source, failed.errors)
    if split is None:
        raise failed
    host, others = split
    if others:  # they fail the conversion as they would without host steps
        raise failed
    _check_host(host, failed)
    host_names = {n.name for n in host}
    kept = tuple(n for n in source.nodes if n.name not in host_names)
    produced = {o for n in host for o in n.outputs if o}
    input_names = {vi.name for vi in source.inputs}
    read: list[str] = []
    for node in host:
        read.extend(i for i in node_reads(node) if i not in produced and i not in read)
    boundary = [v for v in read if v not in input_names and v not in source.constants]
    trimmed = dataclasses.replace(
        source, nodes=kept, outputs=tuple(vi for vi in source.outputs
                                          if vi.name not in produced))
    observer = _Boundary(boundary)
    budgets = options.get("budgets") or active()
    weights = sum(int(getattr(v, "nbytes", 0)) for v in source.constants.values())
    try:
        imported = import_source(trimmed, observer=observer,
                                 budgets=budgets.for_source(weights))
    except ConversionFailed:  # e.g. nothing left for the graph: the first failure says more
        raise failed from None
    types = _source_types(source)
    constants = {v: np.array(source.constants[v]) for v in read if v in source.constants}
    constants.update(observer.constants)
    dtypes = {v: types.get(v) or ("bool" if v in observer.bools else
                                  imported.graph.outputs[v].data_type)
              for v in observer.graph}
    steps = _host_steps(source, host, read, input_names, observer.graph, constants)
    report = imported.report
    report.host_steps = steps.summary()
    by_name = {vi.name: vi for vi in imported.outputs}
    outputs = tuple(by_name.get(vi.name) or ValueInfo(vi.name, vi.dtype, None,
                                                      vi.declared_shape or vi.shape)
                    for vi in source.outputs)
    pairs = state_pairs(imported.graph, imported.inputs, imported.outputs)
    report.warnings.extend(state_notes(pairs))
    result = ConversionResult(imported.graph, report, imported.inputs, outputs, source,
                              state=pairs, host=steps)
    return result, dtypes


def _check_host(host: Sequence[Node], failed: ConversionFailed) -> None:
    """Raise `failed` when a node that failed cannot be a host step (as without host steps),
    a `ConversionFailed` naming the first other node that cannot be one."""
    failed_nodes = {e.node_name for e in failed.errors}
    for node in host:
        why = "control flow cannot run as a host step" if node.op_type in REFUSED \
            else None if node.domain == "" \
            else f"an op of domain {node.domain!r} cannot run as a host step"
        if why is not None and node.name in failed_nodes:
            raise failed
        if why is not None:
            err = UnsupportedOp(f"{why} (it depends on a data-dependent value)")
            err.with_node(node_name=node.name, op_type=node.op_type, domain=node.domain,
                          version=node.version)
            raise ConversionFailed([err], failed.report)


def _host_steps(source: SourceGraph, host: Sequence[Node], read: Sequence[str],
                input_names: set[str], graph_values: Sequence[str],
                constants: Mapping[str, np.ndarray]) -> HostSteps:
    nodes = []
    for node in host:
        try:
            nodes.append(HostNode(node.name, node.op_type, node.domain, node.inputs,
                                  node.outputs, _attributes(node.proto)))
        except HostStepsError as exc:
            err = UnsupportedOp(f"cannot run as a host step: {exc}")
            err.with_node(node_name=node.name, op_type=node.op_type, domain=node.domain,
                          version=node.version)
            raise ConversionFailed([err]) from None
    for name, value in constants.items():
        if value.dtype.name not in DATA_TYPES:
            raise ConversionFailed([UnsupportedOp(
                f"host steps: constant {name!r} has data type {value.dtype}, which host "
                "steps do not carry")])
    inputs = [HostInput(v, "input") for v in read if v in input_names] + \
        [HostInput(v, "graph") for v in graph_values]
    produced = {o for n in host for o in n.outputs if o}
    outputs = tuple(vi.name for vi in source.outputs if vi.name in produced)
    return HostSteps(tuple(nodes), constants, tuple(inputs), outputs,
                     {"": int(source.opsets.get("", 17))})


def node_reads(node: Node) -> list[str]:
    """The values `node` reads: its inputs and what its subgraphs read from outside them."""
    return [*(i for i in node.inputs if i),
            *(n for g in _subgraphs(node.proto) for n in _graph_captures(g))]


def _subgraphs(proto: Any) -> list[Any]:
    from onnx import AttributeProto

    out = []
    for attr in getattr(proto, "attribute", ()):
        if attr.type == AttributeProto.GRAPH:
            out.append(attr.g)
        elif attr.type == AttributeProto.GRAPHS:
            out.extend(attr.graphs)
    return out


def _graph_captures(graph: Any) -> list[str]:
    """The names a GraphProto's nodes read that it does not define."""
    inner = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    out: list[str] = []
    for node in graph.node:
        reads = [*(i for i in node.input if i),
                 *(n for g in _subgraphs(node) for n in _graph_captures(g))]
        out.extend(n for n in reads if n not in inner and n not in out)
        inner.update(node.output)
    out.extend(o.name for o in graph.output if o.name not in inner and o.name not in out)
    return out


def _attributes(proto: Any) -> dict[str, Any]:
    """The attributes of a NodeProto as it states them (no schema defaults); a graph
    attribute (an If branch) as a `HostGraph`."""
    from onnx import AttributeProto, helper, numpy_helper

    out: dict[str, Any] = {}
    for attr in getattr(proto, "attribute", ()):
        if attr.type == AttributeProto.GRAPH:
            out[attr.name] = _host_graph(attr.g)
            continue
        if attr.type in (AttributeProto.GRAPHS, AttributeProto.SPARSE_TENSOR,
                         AttributeProto.SPARSE_TENSORS, AttributeProto.TYPE_PROTO,
                         AttributeProto.TYPE_PROTOS, AttributeProto.TENSORS):
            raise HostStepsError(f"attribute {attr.name!r} has a type host steps do not "
                                 "carry")
        value = helper.get_attribute_value(attr)
        out[attr.name] = numpy_helper.to_array(value) if attr.type == AttributeProto.TENSOR \
            else value
    return out


def _host_graph(graph: Any) -> HostGraph:
    """A GraphProto (an If branch) as a `HostGraph`; its initializers become Constant
    nodes."""
    from onnx import numpy_helper

    consts = [HostNode(f"{graph.name}/{t.name}", "Constant", "", (), (t.name,),
                       {"value": numpy_helper.to_array(t)}) for t in graph.initializer]
    nodes = [HostNode(n.name or f"{graph.name}/{n.op_type}_{k}", n.op_type, n.domain,
                      tuple(n.input), tuple(n.output), _attributes(n))
             for k, n in enumerate(graph.node)]
    return HostGraph(tuple(i.name for i in graph.input), tuple(o.name for o in graph.output),
                     (*consts, *nodes))


def _source_types(source: SourceGraph) -> dict[str, str]:
    """{value name: ONNX data type as a numpy name} by ONNX type inference over the source
    nodes (empty where inference fails)."""
    import onnx
    from onnx import helper

    def info(name: str, dtype: np.dtype[Any], shape: Sequence[Any]) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(dtype),
                                             list(shape))
    try:
        inputs = [info(vi.name, np.dtype(vi.dtype), vi.shape or ()) for vi in source.inputs]
        inputs += [info(k, v.dtype, v.shape) for k, v in source.constants.items()
                   if v.dtype.kind in "biuf"]
        graph = helper.make_graph([n.proto for n in source.nodes], "types", inputs, [])
        model = helper.make_model(graph, opset_imports=[
            helper.make_opsetid(d, v) for d, v in source.opsets.items()])
        model.functions.extend(getattr(source, "functions", {}).values())
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:  # noqa: BLE001 - advisory: onnx raises assorted types
        return {}
    out: dict[str, str] = {}
    for vi in [*inferred.graph.value_info, *inferred.graph.input]:
        elem = vi.type.tensor_type.elem_type
        if elem:
            try:
                out[vi.name] = np.dtype(helper.tensor_dtype_to_np_dtype(elem)).name
            except (KeyError, TypeError):
                continue
    return out


def with_boundary_casts(result: ConversionResult, dtypes: Mapping[str, str]
                        ) -> ConversionResult:
    """`result` with a Cast host step behind each boundary value whose graph output type
    (after the graph passes) is not its source type `dtypes[name]`: the host steps then read
    the source type (the Cast's output, named `<value>/host_<type>`)."""
    from onnx import helper

    steps = result.host
    if steps is None:
        return result
    casts: list[HostNode] = []
    renamed: dict[str, str] = {}
    used = {o for n in steps.nodes for o in n.outputs} | {i.name for i in steps.inputs} \
        | set(steps.constants)
    for name in steps.graph_inputs:
        want = dtypes.get(name)
        operand = result.graph.outputs.get(name)
        if want is None or operand is None or operand.data_type == want \
                or want not in DATA_TYPES:
            continue
        new = f"{name}/host_{want}"
        while new in used:
            new += "_"
        used.add(new)
        renamed[name] = new
        casts.append(HostNode(f"{name}/host_cast", "Cast", "", (name,), (new,),
                              {"to": helper.np_dtype_to_tensor_dtype(np.dtype(want))}))
    if not casts:
        return result
    nodes = [*casts, *(_renamed(n, renamed) for n in steps.nodes)]
    host = dataclasses.replace(steps, nodes=tuple(nodes))
    report = dataclasses.replace(result.report, host_steps=host.summary())
    return dataclasses.replace(result, host=host, report=report)


def _renamed(node: HostNode, names: Mapping[str, str]) -> HostNode:
    """`node` reading `names[v]` for each value `v` it reads (in its subgraphs too, where
    they do not define `v` themselves)."""
    attrs = {k: _renamed_graph(v, names) if isinstance(v, HostGraph) else v
             for k, v in node.attributes.items()}
    return dataclasses.replace(node, inputs=tuple(names.get(i, i) for i in node.inputs),
                               attributes=attrs)


def _renamed_graph(graph: HostGraph, names: Mapping[str, str]) -> HostGraph:
    own = set(graph.inputs) | {o for n in graph.nodes for o in n.outputs}
    inner = {k: v for k, v in names.items() if k not in own}
    return HostGraph(graph.inputs, tuple(inner.get(o, o) for o in graph.outputs),
                     tuple(_renamed(n, inner) for n in graph.nodes))
