"""The ONNX front end's importer: the shared importer loop plus what only ONNX has.

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

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import onnx

from converter.core.budgets import Budgets
from converter.core.errors import (
    ConversionError,
    InternalError,
    InvalidModel,
    UnsupportedAttribute,
    UseFunctionBody,
)
from converter.core.ir import Node, SourceGraph
from converter.core.webnn import MLContext, MLOperand
from converter.frontends.onnx.nodecheck import check_node, schema_of
from converter.frontends.onnx.reader import read_onnx, topological_order
from converter.frontends.onnx.subgraph import (
    expand_function,
    expand_graph,
    function_body,
    schema_functions,
)
from converter.importer import Importer, ImportResult, dtype_str, nested_error, readonly
from converter.results.result import ConversionResult

_NUMPY_TYPES = frozenset({"bool", "float16", "float32", "float64", "int8", "int16", "int32",
                          "int64", "uint8", "uint16", "uint32", "uint64"})
"""The value types `_fold_empty` fills non-constant inputs of (numpy has them)."""


class ONNXImporter(Importer):
    """The shared importer loop with ONNX functions, subgraphs, bool tracking and opset
    wording in errors."""

    def _onnx_type(self, name: str) -> tuple[str, tuple[int, ...]] | None:
        if not name or not self.ctx.has(name):
            return None
        if name in self.consts:
            arr = self.consts[name]
            return dtype_str(arr), tuple(int(d) for d in arr.shape)
        op = self.operands[name]
        if op.data_type == "uint8" and name in self.bool_values:
            return "bool", tuple(op.shape)
        return op.data_type, tuple(op.shape)

    def _track_bool(self, node: Node) -> None:
        """Record which uint8 outputs of `node` are ONNX bools (ONNX type inference)."""
        names = [o for o in node.outputs if o in self.operands and
                 self.operands[o].data_type == "uint8"]
        if not names or node.proto is None:
            return
        try:
            import onnx
            from onnx import helper

            from converter.frontends.onnx.tensors import onnx_elem_type

            schema = schema_of(node.op_type, node.version, node.domain)
            if schema is None:  # no schema, no inference (a failed lookup is slow: cached)
                return
            types = {}
            for i in node.inputs:
                t = self._onnx_type(i)
                if t is not None and t[0] != "string":
                    types[i] = helper.make_tensor_type_proto(onnx_elem_type(t[0]), list(t[1]))
            inferred = onnx.shape_inference.infer_node_outputs(schema, node.proto, types)
        except Exception:  # noqa: BLE001 - type tracking is best effort
            return
        for o in names:
            t = inferred.get(o)
            if t is not None and t.tensor_type.elem_type == onnx.TensorProto.BOOL:
                self.bool_values.add(o)

    def _check_count(self, node: Node, results: Sequence[Any]) -> None:
        """An ONNX node may leave out trailing optional outputs: results past its outputs
        are values nobody reads (dropped). A named output the handler does not compute is
        an output the converter does not support (ops with a schema, whose output count
        `check_node` checked) or one the op does not have (ops without a schema)."""
        schema = schema_of(node.op_type, node.version, node.domain)
        if schema is not None and len(results) > schema.max_output:
            super()._check_count(node, results)  # more than the op has: a handler bug
        missing = [i for i, o in enumerate(node.outputs) if o and i >= len(results)]
        if missing:
            if schema is None:
                raise InvalidModel(f"the node has {len(node.outputs)} output(s), "
                                   f"{node.op_type} computes {len(results)}")
            raise UnsupportedAttribute(f"output {missing[0]} of {node.op_type} "
                                       f"({node.outputs[missing[0]]!r}) is not supported")

    def _convert(self, node: Node) -> None:
        if not any(i in self.poisoned for i in node.inputs if i):
            try:
                check_node(node)  # counts, required inputs and attributes vs the schema
            except InvalidModel as exc:
                self.fail(node, exc)
                return
        if not self._fold_empty(node):
            super()._convert(node)

    def _fold_empty(self, node: Node) -> bool:
        """Fold a node reading an empty constant (see "Empty values" in the module docstring);
        False when it does not apply, and the node converts as usual."""
        if node.domain or node.proto is None or not any(
                i in self.consts and self.consts[i].size == 0 for i in node.inputs if i):
            return False
        if not all(node.outputs) or any(i in self.poisoned for i in node.inputs if i) or any(
                a.ref_attr_name or a.type in (onnx.AttributeProto.GRAPH,
                                              onnx.AttributeProto.GRAPHS)
                for a in node.proto.attribute):
            return False
        known = all(i in self.consts for i in node.inputs if i)
        handler = self.lookup(node.op_type, node.domain, node.version)
        if not known and handler is not None and any(
                node.input(i) and node.input(i) not in self.consts
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
                if name in self.consts:
                    feeds[name] = self.consts[name]
                    continue
                t = self._onnx_type(name)
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
        self._store_consts(node, values)
        self._record(node, "folded")
        return True

    def _inline(self, node: Node) -> bool:
        """Inline the function body of `node`'s op; False when it has none."""
        functions = self.source.functions or {}
        types = [self._onnx_type(i) for i in node.inputs]
        try:
            fn = function_body(node, functions, types)
        except Exception:  # noqa: BLE001 - a broken schema function is just "no body"
            fn = None
        if fn is None:
            return False
        self.check_nesting(node, "function bodies (a recursive function?)")
        try:
            expansion = expand_function(node, fn, self._scope_prefix(node, "fn"),
                                        self.source.opsets)
        except ConversionError as exc:
            self.fail(node, exc)
            return True
        try:
            nodes = self._ordered(f"in the function body of {node.op_type}", expansion.nodes)
        except InvalidModel as exc:
            self.fail(node, exc)
            return True
        before = self._mark()
        records, errors = self._visit_nested(nodes)
        if errors:
            self.fail(node, nested_error(errors, f"in the function body of {node.op_type}"))
            return True
        missing = [o for o in node.outputs if o and not self.ctx.has(o)]
        if missing:  # a model-local function is the model's; a schema's, the converter's
            error = InvalidModel if (node.domain, node.op_type) in functions else InternalError
            self.fail(node, error(f"the function body of {node.op_type} does not produce "
                                  f"{missing}"))
            return True
        produced = [self.operands[o] for o in node.outputs if o in self.operands]
        ops = self._new_ops(produced, before)
        if not ops and all(r.status == "folded" for r in records):
            self._record(node, "folded")
        else:
            self._record(node, "decomposed" if len(ops) > 1 else "native", ops)
        return True

    def has_body(self, node: Node) -> bool:
        """A model-local function or a schema function body (plain or context-dependent)
        defines `node`'s op."""
        if (node.domain, node.op_type) in (self.source.functions or {}):
            return True
        try:
            schema = schema_functions(node.op_type, node.version, node.domain)
        except Exception:  # noqa: BLE001 - unknown op or domain: no body
            return False
        return bool(schema.has_function or schema.has_context_dependent_function)

    _declined: Node | None = None
    """The node whose handler raised `UseFunctionBody`, while its body is being inlined."""

    def fail(self, node: Node, error: ConversionError) -> None:
        """A handler that raised `UseFunctionBody` gets its node converted through the op's
        function body instead (once: a failing body records its own error); without a body
        the handler's error is recorded as usual."""
        if isinstance(error, UseFunctionBody) and self.ctx.node is node \
                and self._declined is not node:
            previous, self._declined = self._declined, node
            try:
                if self._inline(node):
                    return
            finally:
                self._declined = previous
        super().fail(node, error)

    def run_subgraph(self, graph: Any, bindings: Sequence[np.ndarray | MLOperand | str | None],
                     tag: str = "") -> list[np.ndarray | MLOperand]:
        """See `ImportContext.run_subgraph`; `graph` is an ONNX GraphProto (a node's graph
        attribute)."""
        node = self.ctx.node
        if node is None:
            raise InternalError("run_subgraph called outside a handler")
        self.check_nesting(node, "subgraphs")
        prefix = self._scope_prefix(node, tag)
        names: list[str] = []
        for i, value in enumerate(bindings):
            if value is None or isinstance(value, str):
                names.append(value or "")
                continue
            name = f"{prefix}<in{i}>"
            if isinstance(value, MLOperand):
                self.operands[name] = value
            else:
                self.consts[name] = readonly(np.asarray(value))
            names.append(name)
        expansion = expand_graph(graph, names, prefix, self.source.opsets,
                                 self.source.base_dir)
        self.consts.update(expansion.constants)
        _, errors = self._visit_nested(self._ordered(f"in subgraph {graph.name!r}",
                                                     expansion.nodes))
        if errors:
            raise nested_error(errors, f"in subgraph {graph.name!r}")
        out: list[np.ndarray | MLOperand] = []
        for name in expansion.outputs:
            if name in self.poisoned or not self.ctx.has(name):
                raise InvalidModel(f"subgraph {graph.name!r} does not produce its output "
                                   f"{name!r}")
            out.append(self.ctx.value(name))
        return out

    def _ordered(self, where: str, nodes: Sequence[Node]) -> list[Node]:
        """The nodes of an expanded subgraph or function body (`where` says which, for
        messages) in an order where each comes after the nodes producing its inputs (as the
        reader orders the main graph); InvalidModel for an input that neither the body nor
        an enclosing scope defines, a value defined twice, or a cycle."""
        protos = [n.proto for n in nodes]
        outer = {i for p in protos for i in p.input
                 if i and (self.ctx.has(i) or i in self.poisoned)}
        try:
            order = topological_order(protos, outer | {""})
        except InvalidModel as exc:
            exc.message = f"{where}: {exc.message}"
            exc.args = (exc.message,)
            raise
        return [nodes[i] for i in order]

    def no_handler_message(self, node: Node) -> str:
        """Why no handler matched `node` (extension point for other source formats)."""
        from op_mappings.onnx import handlers

        sinces = sorted(h.since for h in handlers()
                        if h.op_type == node.op_type and h.domain == node.domain)
        if sinces:
            return (f"no handler for opset {node.version} (handlers exist from opset "
                    f"{sinces[0]})")
        dom = f" in domain {node.domain!r}" if node.domain else ""
        return f"no handler for {node.op_type}{dom}"


def import_onnx(source: SourceGraph, lookup: Callable[[str, str, int], Any] | None = None,
                context: MLContext | None = None, *,
                budgets: Budgets | None = None) -> ImportResult:
    """Convert an ONNX `SourceGraph` with the ONNX op registry (or `lookup`) within `budgets`
    (default the active ones)."""
    if lookup is None:
        from op_mappings.onnx import lookup as onnx_lookup

        lookup = onnx_lookup
    return ONNXImporter(source, lookup, context, budgets=budgets).run()


def convert_onnx(model: str | os.PathLike[str] | bytes | onnx.ModelProto, *,
                 free_dims: Mapping[str, int] | None = None,
                 input_shapes: Mapping[str, Sequence[int]] | None = None,
                 pin_inputs: Mapping[str, Any] | None = None,
                 context: MLContext | None = None) -> ConversionResult:
    """Read and import an ONNX model (path, bytes or ModelProto).

    Raises `InvalidModel` (unreadable/unsafe model, unresolved dimensions) or
    `ConversionFailed` (one error listing every node that could not be converted).
    """
    source = read_onnx(model, free_dims=free_dims, input_shapes=input_shapes,
                       pin_inputs=pin_inputs)
    result = import_onnx(source, context=context)
    return ConversionResult(result.graph, result.report, result.inputs, result.outputs, source)
