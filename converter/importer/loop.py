"""The importer loop: a `SourceGraph` -> WebNN builder calls (architecture.md sections 2-4).

- Every node is visited. A node without a handler, or whose handler fails, is recorded and
  poisons its outputs; nodes reading poisoned values are skipped (their handlers cannot run
  without the values), except those of an op type no handler or body converts at all, which
  fail too (`has_body`). At the end one `ConversionFailed` lists every failed node with a
  count per op type, so an op type nobody maps is listed wherever it sits in the graph.
- Constant folding: when every input of a node is a constant, the node is evaluated at
  conversion time and its outputs become constants instead of operations: with the handler's
  numpy `fold` function when it has one (data-movement ops; one that returns NotImplemented
  for the values given leaves them to the replay), otherwise by replaying the handler on a
  scratch builder whose inputs are constants and running that tiny graph on the reference
  backend. `Shape` and `Size` always produce constants (every operand is static).
  Handlers may return numpy arrays for outputs that are constants.
- Types: bool values travel as uint8 inside the graph (and come back as bool at the graph
  boundary); float64 constants and graph inputs become float32 with a warning in the report;
  int64 stays int64. Other types WebNN lacks raise `UnsupportedDataType` where they would
  enter the graph.
- Handlers get an explicit `ImportContext`: the builder, the values, the source format's
  settings, warnings, conversion-wide handler state (`ctx.shared`) and subgraph inlining
  (`ctx.run_subgraph`); nothing else of the importer is reachable from a handler.
- Observers (`ImportObserver`, passed as `Importer(..., observer=...)`) see every converted
  source node and may add graph outputs (validation taps every intermediate value so).
- The loop is one class for every format; what formats differ in it asks a `FrontEnd`
  object (passed as `Importer(source, frontend, lookup)`, one per import): a node's
  structure against its op, nodes folded before their handler runs, output counts, bool
  outputs, bodies converting a node without a handler (`inline`, ONNX functions),
  subgraphs (`run_subgraph`: ONNX If/Loop/Scan bodies, TFLite subgraph indices), each
  converted in a fresh name scope that sees every value of the enclosing scopes (nesting
  bounded by the `max_nesting` budget), and the wording of errors.
- Budgets (`converter.core.budgets`, `Importer(..., budgets=...)`, default the active ones): folded
  values are checked against `max_constant_bytes` before they are computed (every operation
  of a replayed fold by its output descriptor) and added to `max_total_constant_bytes`;
  nodes converted inside unrolled loops count against `max_unrolled_nodes`. A
  `BudgetExceeded` error stops the conversion at once (it is not collected), and so does a
  MemoryError, turned into one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from converter.core.budgets import Budgets, out_of_memory
from converter.core.errors import (
    BudgetExceeded,
    ConversionError,
    ConversionFailed,
    InternalError,
    InvalidModel,
    SpecViolation,
    UnsupportedAttribute,
    UnsupportedDataType,
    UnsupportedOp,
)
from converter.core.ir import Node, SourceGraph, ValueInfo
from converter.core.webnn import ML, MLContext, MLGraph, MLGraphBuilder, MLOperand, MLTypeError
from converter.core.webnn.dtypes import carrier_type
from converter.importer.context import ImportContext, ImportObserver, Value, add_warning
from converter.importer.folding import Folder
from converter.importer.metering import Meter
from converter.importer.op_handler import Lookup, OpHandler
from converter.importer.operands import OperandStore
from converter.results.report import ConversionReport, NodeRecord


class FrontEnd(Protocol):
    """What the loop asks the source format (one object per import; see the module
    docstring). Methods acting on the import get the `Importer` and use its public
    attributes and methods. Implemented by `converter.frontends.onnx.importer.ONNXFrontEnd`
    and `converter.frontends.tflite.importer.TFLiteFrontEnd`."""

    def malformed(self, node: Node) -> ConversionError | None:
        """What makes `node` malformed for its op (input/output counts, required inputs and
        attributes), or None; asked before its handler for nodes whose inputs did not
        fail. The loop records the error for the node."""
        ...

    def fold_early(self, loop: Importer, node: Node) -> bool:
        """Convert `node` at conversion time before its handler is looked up (e.g. ONNX
        nodes reading an empty constant); True when it did (and recorded it)."""
        ...

    def check_outputs(self, node: Node, results: Sequence[object]) -> None:
        """Raise a `ConversionError` when a handler's `results` do not fit `node`'s outputs
        (`check_output_count` is the format-neutral check); results past the named outputs
        that pass are dropped."""
        ...

    def track_bool(self, loop: Importer, node: Node) -> None:
        """After `node` converted: add its uint8 outputs that are bools in the source format
        to `loop.bool_values` (they come back as bool at the graph boundary)."""
        ...

    def has_body(self, loop: Importer, node: Node) -> bool:
        """Whether `inline` could convert `node` (a node without a handler) through a body
        its format defines for the op, told without converting it (asked for nodes that read
        a failed node's output)."""
        ...

    def inline(self, loop: Importer, node: Node) -> bool:
        """Convert `node`, which has no handler, through a body its format defines for the
        op (recording it); False when there is none."""
        ...

    def run_subgraph(self, loop: Importer, graph: Any,
                     bindings: Sequence[Value | str | None], tag: str) -> list[Value]:
        """Convert a subgraph inline for the handler of `loop.ctx.node` (see
        `ImportContext.run_subgraph`); a format without subgraphs raises a
        `ConversionError`."""
        ...

    def no_handler_message(self, node: Node) -> str:
        """Why no handler matched `node` (the format names its versions)."""
        ...

    def recover(self, loop: Importer, node: Node, error: ConversionError) -> bool:
        """Asked for every failure before the loop records it: convert `node` another way
        (ONNX: through the function body of an op whose handler raised `UseFunctionBody`);
        True when it did, and the error is dropped."""
        ...

    def word_error(self, error: ConversionError) -> None:
        """Put the format's wording on `error` (what its versions are called, the hint of an
        unsupported op) before the loop records or raises it."""
        ...


def check_output_count(node: Node, results: Sequence[object]) -> None:
    """The format-neutral output check: a handler computing more results than `node` has
    outputs is a handler bug (`InternalError`)."""
    if len(results) > len(node.outputs):
        raise InternalError(f"handler returned {len(results)} outputs, the node has "
                            f"{len(node.outputs)}")


@dataclass(frozen=True, eq=False)
class ImportResult:
    graph: MLGraph
    report: ConversionReport
    inputs: tuple[ValueInfo, ...]
    outputs: tuple[ValueInfo, ...]


IMPORT_PROGRESS: ContextVar[Callable[[int, int], None] | None] = ContextVar(
    "import_progress", default=None)
"""Progress hook: while set (`token = IMPORT_PROGRESS.set(cb)` ... `reset(token)`),
`Importer.run` calls `cb(done, total)` after each top-level source node (a node's subgraphs
count as part of it). The CLI's progress bar uses it; the callback must not raise."""


class Importer:
    """Converts one SourceGraph. `frontend` is the source format's part (`FrontEnd`),
    `lookup(op_type, domain, version)` finds handlers; `settings` are the source format's
    conversion options (handlers read them as `ctx.settings`); `observer` watches the import
    (see `ImportObserver`)."""

    def __init__(self, source: SourceGraph, frontend: FrontEnd, lookup: Lookup,
                 context: MLContext | None = None, *,
                 settings: Mapping[str, Any] | None = None,
                 observer: ImportObserver | None = None,
                 budgets: Budgets | None = None) -> None:
        self.source = source
        self.frontend = frontend
        self.lookup = lookup
        self.context = context or ML().create_context()
        self.builder = MLGraphBuilder(self.context)
        self.report = ConversionReport(source.source_format, warnings=list(source.warnings))
        self.consts: dict[str, np.ndarray] = dict(source.constants)
        self.operands = OperandStore()
        self.observer = observer
        self.bool_values: set[str] = {vi.name for vi in source.inputs if vi.dtype == "bool"}
        """Values whose source type is bool (carried as uint8 operands)."""
        shared: dict[type, Any] = {}
        self.ctx = ImportContext(self.builder, self.consts, self.operands,
                                 warnings=self.report.warnings, settings=settings,
                                 observer=observer, run_subgraph=self.run_subgraph,
                                 bool_values=self.bool_values, shared=shared,
                                 budgets=budgets)
        self.meter: Meter = self.ctx.meter
        """Budget accounting (`converter.importer.metering`), shared by every context."""
        self.errors: list[ConversionError] = []
        self.poisoned: set[str] = set()
        self._folder = Folder(self.ctx, shared)
        self._depth = 0
        self._scopes = 0

    @property
    def settings(self) -> Mapping[str, Any]:
        """The conversion options handlers see as `ctx.settings`."""
        return self.ctx.settings

    @property
    def budgets(self) -> Budgets:
        """The budgets of this import (`ctx.budgets`)."""
        return self.meter.budgets

    def _warn(self, message: str) -> None:
        add_warning(self.report.warnings, message)

    def check_nesting(self, node: Node, what: str) -> None:
        """Raise `BudgetExceeded` when converting another level of function body or
        subgraph inside `node` would nest deeper than the `max_nesting` budget."""
        try:
            self.budgets.check("max_nesting", self._depth + 1, f"{what} would nest")
        except BudgetExceeded as exc:
            raise exc.with_node(node_name=node.name, op_type=node.op_type,
                                domain=node.domain, version=node.version) from None

    # -- driver ------------------------------------------------------------------------
    def run(self) -> ImportResult:
        self._add_inputs()
        progress = IMPORT_PROGRESS.get()
        for done, node in enumerate(self.source.nodes, 1):
            self._visit(node)
            if progress is not None:
                progress(done, len(self.source.nodes))
        outputs = self.graph_outputs()
        if self.observer is not None and not self.errors:
            outputs = self.observer.graph_outputs(self.ctx, outputs)
        if not outputs and not self.errors:
            self.errors.append(InvalidModel("the graph has no outputs"))
        if self.errors:
            raise ConversionFailed(self.errors, self.report)
        graph = self.builder.build(outputs)
        out_infos = tuple(ValueInfo(vi.name, vi.dtype, graph.outputs[vi.name].shape,
                                    vi.declared_shape or vi.shape)
                          for vi in self.source.outputs)
        return ImportResult(graph, self.report, self.source.inputs, out_infos)

    def _add_inputs(self) -> None:
        for vi in self.source.inputs:
            dt = carrier_type(vi.dtype)
            if dt is None:
                self.errors.append(UnsupportedDataType(
                    f"graph input {vi.name!r} has data type {vi.dtype}, which WebNN does not "
                    "have", hint="pin the input to a constant with pin_inputs"))
                self.poisoned.add(vi.name)
                continue
            assert vi.shape is not None
            shape = [int(d) for d in vi.shape]  # type: ignore[arg-type]  # static after reading
            if any(d == 0 for d in shape):
                # an empty tensor has one possible value: it is a constant (WebNN operands
                # cannot be empty; ops reading only its type or shape still convert)
                empty = np.zeros(shape, dtype=vi.dtype)
                empty.setflags(write=False)
                self.consts[vi.name] = empty
                continue
            if vi.dtype == "float64":
                self._warn(f"graph input {vi.name!r} converted from float64 to float32")
            self.operands[vi.name] = self.builder.input(vi.name, shape, dt)

    def record(self, node: Node, status: str, ops: Sequence[str] = ()) -> None:
        """Add `node` to the report with `status` and the WebNN operations it became."""
        self.report.nodes.append(NodeRecord(node.op_type, node.domain, node.name, status,
                                            tuple(ops)))

    def fail(self, node: Node, error: ConversionError) -> None:
        """Record `error` for `node` and poison its outputs (unless the front end converts
        the node another way: `FrontEnd.recover`)."""
        if self.frontend.recover(self, node, error):
            return
        self.frontend.word_error(error)
        error.with_node(node_name=node.name, op_type=node.op_type, domain=node.domain,
                        version=node.version)
        if self.ctx.node is node and not getattr(error, "constant_candidates", None):
            # values the handler wanted as constants: what pinning inputs could fix
            error.constant_candidates = tuple(sorted(self.ctx.queried))
        self.errors.append(error)
        self.poisoned.update(o for o in node.outputs if o)
        self.record(node, "unsupported")

    def _visit(self, node: Node) -> None:
        """Convert one node (recorded in the report); tell the observer about nodes of the
        source graph that converted."""
        self.meter.node()
        try:
            self._convert(node)
        except BudgetExceeded as exc:  # stops the conversion without passing `fail`
            self.frontend.word_error(exc)
            raise
        if self.observer is not None and self._depth == 0 \
                and self.report.nodes[-1].status not in ("unsupported", "skipped"):
            self.observer.on_node(node, [self.consts[o] if o in self.consts
                                         else self.operands.get(o) if o else None
                                         for o in node.outputs])

    def _convert(self, node: Node) -> None:
        if not any(i in self.poisoned for i in node.inputs if i):
            problem = self.frontend.malformed(node)
            if problem is not None:
                self.fail(node, problem)
                return
        if self.frontend.fold_early(self, node):
            return
        outs = [o for o in node.outputs if o]
        if outs and all(o in self.consts for o in outs):  # Constant nodes the reader decoded
            self.record(node, "folded")
            return
        handler = self.lookup(node.op_type, node.domain, node.version)
        if any(i in self.poisoned for i in node.inputs if i):
            self.poisoned.update(outs)
            if handler is None and not self.frontend.has_body(self, node):
                self.fail(node, UnsupportedOp(self.frontend.no_handler_message(node)))
            else:  # (an op type nobody converts fails wherever it is)
                self.record(node, "skipped")
            return
        if handler is None:
            try:
                inlined = self.frontend.inline(self, node)
            except BudgetExceeded as exc:
                raise self._budget_error(node, exc) from None
            if not inlined:
                self.fail(node, UnsupportedOp(self.frontend.no_handler_message(node)))
            return
        self._run_handler(node, handler)

    def _run_handler(self, node: Node, handler: OpHandler) -> None:
        """Fold `node` or emit its operations with `handler`; failures are recorded, budget
        errors and MemoryError stop the conversion."""
        previous, queried = self.ctx.node, self.ctx.queried
        self.ctx.node, self.ctx.queried = node, set()
        try:
            for idx in handler.const_inputs:
                self.ctx.const_input(node, idx)
            all_const = all(i in self.consts for i in node.inputs if i)
            if all_const and handler.fold is not False:
                values = self._folder.fold(node, handler)
                if values is not None:
                    self.store_consts(node, values)
                    self.record(node, "folded")
                    return
            before = self.operands.mark()
            results = list(handler.fn(self.ctx, node))
            self._store(node, results, before)
        except BudgetExceeded as exc:  # stops the conversion: the model asks too much
            raise self._budget_error(node, exc) from None
        except MemoryError:
            raise out_of_memory(self.budgets).with_node(
                node_name=node.name, op_type=node.op_type, domain=node.domain,
                version=node.version) from None
        except ConversionError as exc:
            try:
                self.fail(node, exc)  # may convert the node another way (a function body)
            except BudgetExceeded as budget:
                raise self._budget_error(node, budget) from None
        except MLTypeError as exc:
            self.fail(node, SpecViolation(str(exc)))
        except Exception as exc:  # noqa: BLE001 - collect, don't stop
            err = InternalError(f"{type(exc).__name__}: {exc}")
            err.__cause__ = exc
            self.fail(node, err)
        finally:
            self.ctx.node, self.ctx.queried = previous, queried

    def _budget_error(self, node: Node, exc: BudgetExceeded) -> BudgetExceeded:
        """`exc` naming `node`; at the top level a node of a function body or subgraph that
        went over budget is named inside the message (by the last part of its scoped name)
        and the error names the source graph's node."""
        if self._depth == 0 and exc.node_name is not None and exc.node_name != node.name:
            op = f"{exc.domain}::{exc.op_type}" if exc.domain else (exc.op_type or "?")
            inner = exc.node_name.rstrip("/").rsplit("/", 1)[-1]
            exc.message = f"inside it, {op} {inner!r}: {exc.message}"
            exc.args = (exc.message,)
            exc.node_name = exc.op_type = exc.domain = exc.version = None
        exc.with_node(node_name=node.name, op_type=node.op_type, domain=node.domain,
                      version=node.version)
        return exc

    # -- functions and subgraphs (for front ends) ---------------------------------------
    def scope_prefix(self, node: Node, tag: str = "") -> str:
        """A fresh name scope for a function body or subgraph converted inside `node`."""
        self._scopes += 1
        return f"{node.name}/{tag}{'/' if tag else ''}{self._scopes}/"

    def visit_nested(self, nodes: Sequence[Node]
                     ) -> tuple[list[NodeRecord], list[ConversionError]]:
        """Visit `nodes` (a function body or subgraph) with their own report records and
        error list (returned)."""
        saved_records, saved_errors = self.report.nodes, self.errors
        self.report.nodes, self.errors = [], []
        self._depth += 1
        try:
            for n in nodes:
                self._visit(n)
            return self.report.nodes, self.errors
        finally:
            self.report.nodes, self.errors = saved_records, saved_errors
            self._depth -= 1

    def run_subgraph(self, graph: Any, bindings: Sequence[Value | str | None],
                     tag: str = "") -> list[Value]:
        """See `ImportContext.run_subgraph` (the front end converts the subgraph)."""
        return self.frontend.run_subgraph(self, graph, bindings, tag)

    # -- storing results ----------------------------------------------------------------
    def _store(self, node: Node, results: list[Any], before: int) -> None:
        self.frontend.check_outputs(node, results)
        produced: list[MLOperand] = []
        const_only = True
        for name, value in zip(node.outputs, results, strict=False):
            if not name or value is None:
                continue
            if isinstance(value, MLOperand):
                if value.kind == "constant" and value.value is not None:
                    self.consts[name] = value.value
                else:
                    const_only = False
                    self.operands[name] = value
                    produced.append(value)
            else:
                arr = np.asarray(value)
                self.meter.add_constant(int(arr.nbytes))
                self.consts[name] = readonly(arr)
        if const_only and results:
            self.record(node, "folded")
        else:
            ops = self.operands.new_ops(produced, before)
            self.record(node, "decomposed" if len(ops) > 1 else "native", ops)
            self.frontend.track_bool(self, node)

    def store_consts(self, node: Node, values: Sequence[Any]) -> None:
        """Store `values` (numpy arrays, None for outputs not computed) as the constant
        outputs of `node`, counted against the constant budgets."""
        self.frontend.check_outputs(node, values)
        for name, value in zip(node.outputs, values, strict=False):
            if name and value is not None:
                arr = np.asarray(value)
                self.meter.add_constant(int(arr.nbytes))
                self.consts[name] = readonly(arr)

    # -- outputs -----------------------------------------------------------------------
    def graph_outputs(self) -> dict[str, MLOperand]:
        """The source graph's outputs as operands (the observer may add more, see
        `ImportObserver.graph_outputs`; `run` refuses a graph that has none after that)."""
        outputs: dict[str, MLOperand] = {}
        for vi in self.source.outputs:
            name = vi.name
            if name in self.poisoned:
                continue
            if name in self.consts and self.consts[name].size == 0:
                self.errors.append(UnsupportedAttribute(
                    f"graph output {name!r} is empty (shape {list(self.consts[name].shape)}), "
                    "which a WebNN graph cannot return"))
                continue
            try:
                operand = self.ctx.operand(name)
                if operand.kind != "output":
                    operand = self.builder.identity(operand)
                outputs[name] = operand
            except ConversionError as exc:
                self.errors.append(exc.with_node(node_name=None, op_type=None, domain=None,
                                                 version=None))
        return outputs


def nested_error(errors: Sequence[ConversionError], where: str) -> ConversionError:
    """One error for the failures of nodes inside a function body or subgraph: the first
    inner error's class and hint, its node named in the message, the others counted."""
    first = errors[0]
    err = first.copy()
    inner = first.where
    more = f" (and {len(errors) - 1} more inner node(s))" if len(errors) > 1 else ""
    err.message = f"{where}: {inner + ': ' if inner else ''}{first.message}{more}"
    err.args = (err.message,)
    err.node_name = err.op_type = err.domain = err.version = None
    err.inner = tuple(errors)
    return err


def readonly(arr: np.ndarray) -> np.ndarray:
    """`arr`, made read-only (values of the import are never written)."""
    if arr.flags.writeable:
        arr.setflags(write=False)
    return arr
