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
- Front ends subclass `Importer` for what only their format has: functions inlined when a
  node has no handler (`_inline`, ONNX), subgraphs (`run_subgraph`: ONNX If/Loop/Scan
  bodies, TFLite subgraph indices), each converted in a fresh name scope that sees every
  value of the enclosing scopes (nesting bounded by the `max_nesting` budget).
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
from itertools import islice
from typing import Any

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
from converter.core.webnn import (
    ML,
    MLContext,
    MLGraph,
    MLGraphBuilder,
    MLOperand,
    MLOperationError,
    MLTypeError,
)
from converter.core.webnn.dtypes import carrier_type
from converter.importer.context import ImportContext, ImportObserver, _add_warning
from converter.importer.metering import Meter, shape_bytes
from converter.results.report import ConversionReport, NodeRecord

# -- the loop -------------------------------------------------------------------------------


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
    """Converts one SourceGraph. `lookup(op_type, domain, version)` finds handlers;
    `settings` are the source format's conversion options (handlers read them as
    `ctx.settings`); `observer` watches the import (see `ImportObserver`).

    Front ends subclass it for what only their format has (`run_subgraph`, `_inline`,
    `_track_bool`, `no_handler_message`, `fail`)."""

    def __init__(self, source: SourceGraph, lookup: Callable[[str, str, int], Any],
                 context: MLContext | None = None, *,
                 settings: Mapping[str, Any] | None = None,
                 observer: ImportObserver | None = None,
                 budgets: Budgets | None = None) -> None:
        self.source = source
        self.lookup = lookup
        self.context = context or ML().create_context()
        self.builder = MLGraphBuilder(self.context)
        self.report = ConversionReport(source.source_format, warnings=list(source.warnings))
        self.consts: dict[str, np.ndarray] = dict(source.constants)
        self.operands: dict[str, MLOperand] = _Operands()
        self.observer = observer
        self.bool_values: set[str] = {vi.name for vi in source.inputs if vi.dtype == "bool"}
        """Values whose source type is bool (carried as uint8 operands)."""
        self._shared: dict[type, Any] = {}
        self.ctx = ImportContext(self.builder, self.consts, self.operands,
                                 warnings=self.report.warnings, settings=settings,
                                 observer=observer, run_subgraph=self.run_subgraph,
                                 bool_values=self.bool_values, shared=self._shared,
                                 budgets=budgets)
        self.meter: Meter = self.ctx.meter
        """Budget accounting (`converter.importer.metering`), shared by every context."""
        self.errors: list[ConversionError] = []
        self.poisoned: set[str] = set()
        self._fold_context: MLContext | None = None
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
        _add_warning(self.report.warnings, message)

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

    def _record(self, node: Node, status: str, ops: Sequence[str] = ()) -> None:
        self.report.nodes.append(NodeRecord(node.op_type, node.domain, node.name, status,
                                            tuple(ops)))

    def fail(self, node: Node, error: ConversionError) -> None:
        """Record `error` for `node` and poison its outputs (extension point: format
        importers may adjust the error's wording first)."""
        error.with_node(node_name=node.name, op_type=node.op_type, domain=node.domain,
                        version=node.version)
        if self.ctx.node is node and not getattr(error, "constant_candidates", None):
            # values the handler wanted as constants: what pinning inputs could fix
            error.constant_candidates = tuple(sorted(self.ctx.queried))
        self.errors.append(error)
        self.poisoned.update(o for o in node.outputs if o)
        self._record(node, "unsupported")

    def _visit(self, node: Node) -> None:
        """Convert one node (recorded in the report); tell the observer about nodes of the
        source graph that converted."""
        self.meter.node()
        self._convert(node)
        if self.observer is not None and self._depth == 0 \
                and self.report.nodes[-1].status not in ("unsupported", "skipped"):
            self.observer.on_node(node, [self.consts[o] if o in self.consts
                                         else self.operands.get(o) if o else None
                                         for o in node.outputs])

    def _convert(self, node: Node) -> None:
        outs = [o for o in node.outputs if o]
        if outs and all(o in self.consts for o in outs):  # Constant nodes the reader decoded
            self._record(node, "folded")
            return
        handler = self.lookup(node.op_type, node.domain, node.version)
        if any(i in self.poisoned for i in node.inputs if i):
            self.poisoned.update(outs)
            if handler is None and not self.has_body(node):  # unsupported wherever it is
                self.fail(node, UnsupportedOp(self.no_handler_message(node)))
            else:
                self._record(node, "skipped")
            return
        if handler is None:
            try:
                inlined = self._inline(node)
            except BudgetExceeded as exc:
                raise self._budget_error(node, exc) from None
            if not inlined:
                self.fail(node, UnsupportedOp(self.no_handler_message(node)))
            return
        previous, queried = self.ctx.node, self.ctx.queried
        self.ctx.node, self.ctx.queried = node, set()
        try:
            for idx in handler.const_inputs:
                self.ctx.const_input(node, idx)
            all_const = all(i in self.consts for i in node.inputs if i)
            if all_const and handler.fold is not False:
                values = self._fold(node, handler)
                if values is not None:
                    self._store_consts(node, values)
                    self._record(node, "folded")
                    return
            before = self._mark()
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

    # -- functions and subgraphs ------------------------------------------------------
    def _scope_prefix(self, node: Node, tag: str = "") -> str:
        self._scopes += 1
        return f"{node.name}/{tag}{'/' if tag else ''}{self._scopes}/"

    def _inline(self, node: Node) -> bool:
        """Convert `node` through a body the source format defines for its op (e.g. an ONNX
        function) when no handler exists; False when there is none (extension point)."""
        return False

    def has_body(self, node: Node) -> bool:
        """Whether `_inline` could convert `node` (a node without a handler) through a body
        its source format defines for the op, told without converting it (extension point;
        asked for nodes that read a failed node's output)."""
        return False

    def _track_bool(self, node: Node) -> None:
        """Called after a node converted (extension point: the ONNX front end records which
        uint8 outputs are ONNX bools)."""

    def _visit_nested(self, nodes: Sequence[Node]
                      ) -> tuple[list[NodeRecord], list[ConversionError]]:
        """Visit `nodes` with their own report records and error list (returned)."""
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

    def run_subgraph(self, graph: Any, bindings: Sequence[np.ndarray | MLOperand | str | None],
                     tag: str = "") -> list[np.ndarray | MLOperand]:
        """See `ImportContext.run_subgraph` (implemented by front ends whose nodes carry
        subgraphs)."""
        raise UnsupportedAttribute("this source format has no subgraph attributes")

    def no_handler_message(self, node: Node) -> str:
        """Why no handler matched `node` (extension point: front ends name their versions)."""
        dom = f" in domain {node.domain!r}" if node.domain else ""
        return f"no handler for {node.op_type}{dom}"

    # -- storing results ----------------------------------------------------------------
    def _check_count(self, node: Node, results: Sequence[Any]) -> None:
        if len(results) > len(node.outputs):
            raise InternalError(f"handler returned {len(results)} outputs, the node has "
                                f"{len(node.outputs)}")

    def _mark(self) -> int:
        """Where the operands stored from now on begin (`before` of `_new_ops`)."""
        return self.operands.mark() if isinstance(self.operands, _Operands) else len(
            self.operands)

    def _new_ops(self, produced: Sequence[MLOperand], before: int) -> list[str]:
        """Spec names of the operations (in creation order) that produced `produced` and
        that did not exist when `_mark()` was `before`."""
        # stored before: by the stamps `_Operands` gives (constant time per operand; a set
        # of the first `before` values per node made long unrolled loops quadratic)
        new_ops: dict[int, str] = {}
        stack = [o for o in produced if o.kind == "output"]
        if isinstance(self.operands, _Operands):
            stamps = self.operands.stamps
            get = stamps.get
            while stack:
                o = stack.pop()
                operation = o.operator
                if operation is None or id(operation) in new_ops or get(id(o), before) < before:
                    continue
                new_ops[id(operation)] = operation.op
                for d in operation.operand_tuple():
                    if d.kind == "output" and get(id(d), before) >= before:
                        stack.append(d)
            return list(new_ops.values())[::-1]
        first = set(map(id, islice(self.operands.values(), before)))
        while stack:
            o = stack.pop()
            operation = o.operator
            if operation is None or id(operation) in new_ops or id(o) in first:
                continue
            new_ops[id(operation)] = operation.op
            for d in operation.operand_tuple():
                if d.kind == "output" and id(d) not in first:
                    stack.append(d)
        return list(new_ops.values())[::-1]

    def _store(self, node: Node, results: list[Any], before: int | None = None) -> None:
        self._check_count(node, results)
        if before is None:
            before = self._mark()
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
            self._record(node, "folded")
        else:
            ops = self._new_ops(produced, before)
            self._record(node, "decomposed" if len(ops) > 1 else "native", ops)
            self._track_bool(node)

    def _store_consts(self, node: Node, values: Sequence[Any]) -> None:
        self._check_count(node, values)
        for name, value in zip(node.outputs, values, strict=False):
            if name and value is not None:
                arr = np.asarray(value)
                self.meter.add_constant(int(arr.nbytes))
                self.consts[name] = readonly(arr)

    # -- folding -----------------------------------------------------------------------
    def _fold(self, node: Node, handler: Any) -> list[Any] | None:
        """Evaluate a node whose inputs are all constants; None when it cannot be folded
        (e.g. no reference kernel), so the caller emits it normally."""
        if callable(handler.fold):
            args = [self.consts[i] if i else None for i in node.inputs]
            folded = handler.fold(self.ctx, node, args)  # None: keep this node in the graph
            if folded is not NotImplemented:  # NotImplemented: fold by replaying the handler
                return None if folded is None else list(folded)
        if self._fold_context is None:
            self._fold_context = ML().create_context()
        builder = MLGraphBuilder(self._fold_context)
        fctx = ImportContext(builder, self.consts, {}, warnings=self.report.warnings,
                             settings=self.ctx.settings, folding=True, observer=self.observer,
                             shared=self._shared)
        fctx.node = node
        results = list(handler.fn(fctx, node))
        values: list[Any] = [None] * len(results)
        to_run: dict[str, MLOperand] = {}
        for i, value in enumerate(results):
            if value is None:
                continue
            if isinstance(value, MLOperand):
                if value.kind == "constant":
                    values[i] = value.value
                else:
                    to_run[f"out{i}"] = value
            else:
                values[i] = np.asarray(value)
        if to_run:
            graph = builder.build(to_run)
            for op in graph.operations:  # every value the reference backend would compute
                for out in op.outputs:
                    self.meter.check_constant(shape_bytes(out.shape, out.data_type),
                                              f"the folded value ({op.op}) would take")
            try:
                computed = self._fold_context.compute(graph, {})
            except (MLOperationError, NotImplementedError):
                return None
            for key, arr in computed.items():
                values[int(key[3:])] = arr
        return values

    # -- outputs -----------------------------------------------------------------------
    def graph_outputs(self) -> dict[str, MLOperand]:
        """The source graph's outputs as operands (the observer may add more, see
        `ImportObserver.graph_outputs`)."""
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
        if not outputs and not self.errors:
            self.errors.append(InvalidModel("the graph has no outputs"))
        return outputs


class _Operands(dict[str, MLOperand]):
    """The importer's operands by value name. `stamps` numbers every operand stored under a
    name (by id; the builder keeps them alive) in the order they were first stored, and
    `mark()` is the next number: `_new_ops` tells the operands of earlier nodes from a node's
    own by their stamps, without walking every value."""

    def __init__(self) -> None:
        super().__init__()
        self.stamps: dict[int, int] = {}

    def __setitem__(self, key: str, value: MLOperand) -> None:
        super().__setitem__(key, value)
        self.stamps.setdefault(id(value), len(self.stamps))

    def mark(self) -> int:
        return len(self.stamps)


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
    if arr.flags.writeable:
        arr.setflags(write=False)
    return arr
