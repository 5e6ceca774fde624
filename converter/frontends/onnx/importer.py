"""`ONNXFrontEnd`: what only ONNX has, for the shared importer loop (`converter.importer.FrontEnd`).

- Functions: a node without a handler (or whose handler declines it by raising
  `UseFunctionBody`) whose op is a model-local function (`ModelProto.functions`) or whose
  schema has a function body is inlined: the body's nodes are converted in a fresh name
  scope (nesting bounded by the `max_nesting` budget); the node is reported as one node
  (decomposed/native/folded) with the WebNN ops of its body.
- Subgraphs: handlers of control-flow ops (If, Loop, Scan) call `ctx.run_subgraph(graph,
  bindings)`, which converts a subgraph in a fresh name scope; the subgraph sees every value
  of the enclosing scopes by name. Its nodes are sorted as the reader sorts the main graph
  (`topological_order`): an input that neither the subgraph nor an enclosing scope defines,
  a value defined twice or a cycle is an InvalidModel error.
- Node structure: before its handler runs, a node is checked against its op's onnx schema
  (`nodecheck.check_node`: input/output counts, required inputs and attributes, attribute
  types); a node that does not fit is an InvalidModel error saying what is wrong. Trailing
  outputs a node leaves out are dropped from its handler's results.
- Bool tracking: bool values travel as uint8 operands; ONNX type inference tells which
  uint8 outputs are bools, so they come back as bool at the graph boundary.
- Empty values: a zero-size tensor has one possible value, so it is a constant (zero-size
  graph inputs, an empty Slice result, a Split part of size 0; WebNN operands cannot be
  empty). A standard-domain node reading one is computed at conversion time by onnx's
  reference evaluator (`onnx.reference`) when its result does not depend on the values of
  its other inputs: with every input known it folds; otherwise (the inputs its handler
  needs constant being constants) it is evaluated with those inputs filled with zeros and
  with ones, and folds when both give the same empty results (e.g. an elementwise op
  broadcasting an operand against an empty constant). Other nodes (a Concat that drops the
  empty input) go to their handlers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx

from converter.core.errors import (
    ConversionError,
    InternalError,
    InvalidModel,
    UnsupportedAttribute,
    UseFunctionBody,
)
from converter.core.ir import Node, SourceGraph
from converter.core.webnn import MLOperand
from converter.frontends.onnx.node_order import topological_order
from converter.frontends.onnx.nodecheck import check_node, schema_of
from converter.frontends.onnx.subgraph import (
    expand_function,
    expand_graph,
    function_body,
    schema_functions,
)
from converter.frontends.onnx.tensors import onnx_elem_type
from converter.importer import (
    Importer,
    Value,
    check_output_count,
    dtype_str,
    nested_error,
    readonly,
)

_NUMPY_TYPES = frozenset({"bool", "float16", "float32", "float64", "int8", "int16", "int32",
                          "int64", "uint8", "uint16", "uint32", "uint64"})
"""The value types `ONNXFrontEnd.fold_early` fills non-constant inputs of (numpy has them)."""


class ONNXFrontEnd:
    """The ONNX part of one import (`converter.importer.FrontEnd`) of `source`: functions,
    subgraphs, node checks against the schemas, bool tracking, empty-value folding and
    opset wording in errors."""

    def __init__(self, source: SourceGraph) -> None:
        self.source = source
        self._declined: Node | None = None
        """The node whose handler raised `UseFunctionBody`, while its body is being
        inlined."""

    def malformed(self, node: Node) -> ConversionError | None:
        """The node against its op's schema (`nodecheck.check_node`)."""
        try:
            check_node(node)  # counts, required inputs and attributes vs the schema
        except InvalidModel as exc:
            return exc
        return None

    def fold_early(self, loop: Importer, node: Node) -> bool:
        """Fold a node reading an empty constant (see "Empty values" in the module
        docstring); False when it does not apply, and the node converts as usual."""
        consts = loop.consts
        if node.domain or node.proto is None or not any(
                i in consts and consts[i].size == 0 for i in node.inputs if i):
            return False
        if not all(node.outputs) or any(i in loop.poisoned for i in node.inputs if i) or any(
                a.ref_attr_name or a.type in (onnx.AttributeProto.GRAPH,
                                              onnx.AttributeProto.GRAPHS)
                for a in node.proto.attribute):
            return False
        known = all(i in consts for i in node.inputs if i)
        handler = loop.lookup(node.op_type, node.domain, node.version)
        if not known and handler is not None and any(
                node.input(i) and node.input(i) not in consts
                for i in handler.const_inputs):
            return False  # an input that must be constant is not: the handler says so
        proto = onnx.NodeProto()
        proto.CopyFrom(node.proto)
        del proto.input[:]
        del proto.output[:]
        proto.input.extend(node.inputs)
        proto.output.extend(node.outputs)
        results: list[list[np.ndarray]] = []
        for fill in (0,) if known else (0, 1):
            feeds: dict[str, np.ndarray] = {}
            for name in node.inputs:
                if not name or name in feeds:
                    continue
                if name in consts:
                    feeds[name] = consts[name]
                    continue
                t = _onnx_type(loop, name)
                if t is None or t[0] not in _NUMPY_TYPES:
                    return False
                feeds[name] = np.full(t[1], fill, dtype=t[0])
            try:
                from onnx.reference import ReferenceEvaluator

                evaluator = ReferenceEvaluator(proto, opsets=dict(self.source.opsets))
                with np.errstate(all="ignore"):  # a malformed node may overflow: no warnings
                    results.append([np.asarray(v) for v in evaluator.run(None, feeds)])
            except Exception:  # noqa: BLE001 - no reference kernel: the handler decides
                return False
        values = results[0]
        if len(values) != len(node.outputs):
            return False
        if not known and any(a.size or b.size or a.shape != b.shape or a.dtype != b.dtype
                             for a, b in zip(values, results[1], strict=True)):
            return False
        loop.store_consts(node, values)
        loop.record(node, "folded")
        return True

    def check_outputs(self, node: Node, results: Sequence[object]) -> None:
        """An ONNX node may leave out trailing optional outputs: results past its outputs
        are values nobody reads (dropped). A named output the handler does not compute is
        an output the converter does not support (ops with a schema, whose output count
        `check_node` checked) or one the op does not have (ops without a schema)."""
        schema = schema_of(node.op_type, node.version, node.domain)
        if schema is not None and len(results) > schema.max_output:
            check_output_count(node, results)  # more than the op has: a handler bug
        missing = [i for i, o in enumerate(node.outputs) if o and i >= len(results)]
        if missing:
            if schema is None:
                raise InvalidModel(f"the node has {len(node.outputs)} output(s), "
                                   f"{node.op_type} computes {len(results)}")
            raise UnsupportedAttribute(f"output {missing[0]} of {node.op_type} "
                                       f"({node.outputs[missing[0]]!r}) is not supported")

    def track_bool(self, loop: Importer, node: Node) -> None:
        """Record which uint8 outputs of `node` are ONNX bools (ONNX type inference)."""
        names = [o for o in node.outputs if o in loop.operands and
                 loop.operands[o].data_type == "uint8"]
        if not names or node.proto is None:
            return
        try:
            schema = schema_of(node.op_type, node.version, node.domain)
            if schema is None:  # no schema, no inference (a failed lookup is slow: cached)
                return
            types = {}
            for i in node.inputs:
                t = _onnx_type(loop, i)
                if t is not None and t[0] != "string":
                    types[i] = onnx.helper.make_tensor_type_proto(onnx_elem_type(t[0]),
                                                                  list(t[1]))
            inferred = onnx.shape_inference.infer_node_outputs(schema, node.proto, types)
        except Exception:  # noqa: BLE001 - type tracking is best effort
            return
        for o in names:
            t = inferred.get(o)
            if t is not None and t.tensor_type.elem_type == onnx.TensorProto.BOOL:
                loop.bool_values.add(o)

    def has_body(self, loop: Importer, node: Node) -> bool:
        """A model-local function or a schema function body (plain or context-dependent)
        defines `node`'s op."""
        if (node.domain, node.op_type) in (self.source.functions or {}):
            return True
        try:
            schema = schema_functions(node.op_type, node.version, node.domain)
        except Exception:  # noqa: BLE001 - unknown op or domain: no body
            return False
        return bool(schema.has_function or schema.has_context_dependent_function)

    def inline(self, loop: Importer, node: Node) -> bool:
        """Inline the function body of `node`'s op; False when it has none."""
        functions = self.source.functions or {}
        types = [_onnx_type(loop, i) for i in node.inputs]
        try:
            fn = function_body(node, functions, types)
        except Exception:  # noqa: BLE001 - a broken schema function is just "no body"
            fn = None
        if fn is None:
            return False
        loop.check_nesting(node, "function bodies (a recursive function?)")
        try:
            expansion = expand_function(node, fn, loop.scope_prefix(node, "fn"),
                                        self.source.opsets)
        except ConversionError as exc:
            loop.fail(node, exc)
            return True
        try:
            nodes = _ordered(loop, f"in the function body of {node.op_type}", expansion.nodes)
        except InvalidModel as exc:
            loop.fail(node, exc)
            return True
        before = loop.operands.mark()
        records, errors = loop.visit_nested(nodes)
        if errors:
            loop.fail(node, nested_error(errors, f"in the function body of {node.op_type}"))
            return True
        missing = [o for o in node.outputs if o and not loop.ctx.has(o)]
        if missing:  # a model-local function is the model's; a schema's, the converter's
            error = InvalidModel if (node.domain, node.op_type) in functions else InternalError
            loop.fail(node, error(f"the function body of {node.op_type} does not produce "
                                  f"{missing}"))
            return True
        produced = [loop.operands[o] for o in node.outputs if o in loop.operands]
        ops = loop.operands.new_ops(produced, before)
        if not ops and all(r.status == "folded" for r in records):
            loop.record(node, "folded")
        else:
            loop.record(node, "decomposed" if len(ops) > 1 else "native", ops)
        return True

    def recover(self, loop: Importer, node: Node, error: ConversionError) -> bool:
        """A handler that raised `UseFunctionBody` gets its node converted through the op's
        function body instead (once: a failing body records its own error); without a body
        the handler's error is recorded as usual."""
        if isinstance(error, UseFunctionBody) and loop.ctx.node is node \
                and self._declined is not node:
            previous, self._declined = self._declined, node
            try:
                if self.inline(loop, node):
                    return True
            finally:
                self._declined = previous
        return False

    def word_error(self, error: ConversionError) -> None:
        """ONNX wording is the errors' default (opsets, the ONNX handler hint)."""

    def run_subgraph(self, loop: Importer, graph: Any,
                     bindings: Sequence[Value | str | None], tag: str) -> list[Value]:
        """See `ImportContext.run_subgraph`; `graph` is an ONNX GraphProto (a node's graph
        attribute)."""
        node = loop.ctx.node
        if node is None:
            raise InternalError("run_subgraph called outside a handler")
        loop.check_nesting(node, "subgraphs")
        prefix = loop.scope_prefix(node, tag)
        names: list[str] = []
        for i, value in enumerate(bindings):
            if value is None or isinstance(value, str):
                names.append(value or "")
                continue
            name = f"{prefix}<in{i}>"
            if isinstance(value, MLOperand):
                loop.operands[name] = value
            else:
                loop.consts[name] = readonly(np.asarray(value))
            names.append(name)
        expansion = expand_graph(graph, names, prefix, self.source.opsets,
                                 self.source.base_dir)
        loop.consts.update(expansion.constants)
        _, errors = loop.visit_nested(_ordered(loop, f"in subgraph {graph.name!r}",
                                               expansion.nodes))
        if errors:
            raise nested_error(errors, f"in subgraph {graph.name!r}")
        out: list[Value] = []
        for name in expansion.outputs:
            if name in loop.poisoned or not loop.ctx.has(name):
                raise InvalidModel(f"subgraph {graph.name!r} does not produce its output "
                                   f"{name!r}")
            out.append(loop.ctx.value(name))
        return out

    def no_handler_message(self, node: Node) -> str:
        """Why no handler matched `node`: the opset handlers exist from, when they do."""
        from op_mappings.onnx import handlers

        sinces = sorted(h.since for h in handlers()
                        if h.op_type == node.op_type and h.domain == node.domain)
        if sinces:
            return (f"no handler for opset {node.version} (handlers exist from opset "
                    f"{sinces[0]})")
        dom = f" in domain {node.domain!r}" if node.domain else ""
        return f"no handler for {node.op_type}{dom}"


def _onnx_type(loop: Importer, name: str) -> tuple[str, tuple[int, ...]] | None:
    """The ONNX element type and shape of value `name` (uint8 operands carrying bools are
    "bool"), or None for an omitted or unknown value."""
    if not name or not loop.ctx.has(name):
        return None
    if name in loop.consts:
        arr = loop.consts[name]
        return dtype_str(arr), tuple(int(d) for d in arr.shape)
    op = loop.operands[name]
    if op.data_type == "uint8" and name in loop.bool_values:
        return "bool", tuple(op.shape)
    return op.data_type, tuple(op.shape)


def _ordered(loop: Importer, where: str, nodes: Sequence[Node]) -> list[Node]:
    """The nodes of an expanded subgraph or function body (`where` says which, for
    messages) in an order where each comes after the nodes producing its inputs (as the
    reader orders the main graph); InvalidModel for an input that neither the body nor
    an enclosing scope defines, a value defined twice, or a cycle."""
    protos = [n.proto for n in nodes]
    outer = {i for p in protos for i in p.input
             if i and (loop.ctx.has(i) or i in loop.poisoned)}
    try:
        order = topological_order(protos, outer | {""})
    except InvalidModel as exc:
        exc.message = f"{where}: {exc.message}"
        exc.args = (exc.message,)
        raise
    return [nodes[i] for i in order]
