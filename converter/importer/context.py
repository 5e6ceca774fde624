"""What handlers see: `ImportContext` (the builder, the values of the graph so far, the
source format's settings, warnings, conversion-wide state, subgraph inlining) and the
`ImportObserver` hook."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeVar, overload

import numpy as np

from converter.core.budgets import Budgets, active
from converter.core.errors import (
    InternalError,
    InvalidModel,
    RequiresConstantInput,
    UnsupportedAttribute,
    UnsupportedDataType,
)
from converter.core.ir import Node
from converter.core.webnn import MLGraphBuilder, MLOperand
from converter.core.webnn.dtypes import carrier_type, dtype_name
from converter.importer.metering import Meter, Unrolling, shape_bytes

Value = np.ndarray | MLOperand
"""A value of the graph being built: a numpy array (known at conversion time) or an
operand."""

SubgraphRunner = Callable[[Any, Sequence[Value | str | None], str], list[Value]]
"""`run(graph, bindings, tag)`: converts a subgraph of the source format inline (see
`ImportContext.run_subgraph`)."""

T = TypeVar("T")


class ImportObserver:
    """Hooks into one import, passed as `Importer(..., observer=...)` (every method has a
    default that does nothing; override what you need).

    - `on_node(node, outputs)`: a node of the source graph (not one inside a function body
      or subgraph) converted or folded; `outputs` are its output values in `node.outputs`
      order (numpy arrays for constants, operands otherwise; None for omitted outputs).
    - `graph_outputs(ctx, outputs)`: the outputs `build()` will get, once every node
      converted without errors; returns them, possibly with more added (e.g.
      `converter.validate.taps` exposes every intermediate value). `ctx` gives the values
      (`ctx.operands`, `ctx.consts`).
    """

    def on_node(self, node: Node, outputs: Sequence[Value | None]) -> None:
        """See the class docstring."""

    def graph_outputs(self, ctx: ImportContext, outputs: dict[str, MLOperand]
                      ) -> dict[str, MLOperand]:
        """See the class docstring."""
        return outputs


class ImportContext:
    """What handlers see: everything a handler may use, explicitly.

    - `builder`: the `MLGraphBuilder` the graph is built with.
    - values: `consts` (name -> numpy array, values known at conversion time) and `operands`
      (name -> MLOperand); `operand(name)`, `const_value(name)`, `inputs(node)`, ... read
      them. A constant becomes a builder constant the first time a handler asks for its
      operand.
    - `settings`: the conversion options of the source format (read-only; e.g. TFLite's
      `fold_fp16`, `max_while_iterations`).
    - `warn(message)`: a warning in the conversion report (prefixed with the current node);
      `warnings` is the report's list.
    - `observer`: the import's `ImportObserver` (None when nobody watches).
    - `run_subgraph(graph, bindings, tag)`: convert a subgraph of the source format inline
      (ONNX If/Loop/Scan bodies, TFLite subgraphs); not available while folding.
    - `is_bool(name)`: whether a uint8 operand carries a source bool.
    - `memo`: values handlers derive once per builder (e.g. TFLite's dequantized inputs);
      one per context, since operands belong to its builder.
    - `shared(kind)`: the conversion-wide instance of a handler state class (e.g. TFLite's
      resource variables), the same for every context of one import.
    - `node`, `folding`, `queried`: the node being converted, whether this context folds a
      node on a scratch builder, and the values a handler asked about that were not
      constants.
    - `budgets` (`converter.core.budgets.Budgets`) and `meter` (what the import has spent, shared
      by every context of one import): `check_constant(shape, dtype)` before allocating a
      constant, `unrolling(what, trip, body_nodes)` around a loop being unrolled,
      `budgets.check(name, amount, subject)` for the other budgets. A budget error
      (`BudgetExceeded`) stops the whole conversion.
    """

    def __init__(self, builder: MLGraphBuilder, consts: dict[str, np.ndarray],
                 operands: dict[str, MLOperand], *, warnings: list[str] | None = None,
                 settings: Mapping[str, Any] | None = None, folding: bool = False,
                 observer: ImportObserver | None = None,
                 run_subgraph: SubgraphRunner | None = None,
                 bool_values: set[str] | None = None,
                 shared: dict[type, Any] | None = None,
                 budgets: Budgets | None = None) -> None:
        self.builder = builder
        self.consts = consts
        self.operands = operands
        self.warnings: list[str] = [] if warnings is None else warnings
        self.settings: Mapping[str, Any] = MappingProxyType(dict(settings or {}))
        self.folding = folding
        self.observer = observer
        self.bool_values: set[str] = set() if bool_values is None else bool_values
        """Values whose source type is bool (carried as uint8 operands)."""
        self.memo: dict[Any, Any] = {}
        self.node: Node | None = None
        self.queried: set[str] = set()
        """Values a handler asked about (`is_constant`, `const_value`) that were not
        constants; attached to the node's error as `constant_candidates`."""
        self._run_subgraph = run_subgraph
        self._shared: dict[type, Any] = {} if shared is None else shared
        if Meter not in self._shared:
            self._shared[Meter] = Meter(budgets if budgets is not None else active())
        self.meter: Meter = self._shared[Meter]
        """Budget accounting of the import (the same for every context of it)."""

    @property
    def budgets(self) -> Budgets:
        """The budgets of this conversion (`converter.core.budgets.Budgets`)."""
        return self.meter.budgets

    def check_constant(self, shape: Any, dtype: Any,
                       subject: str = "the folded constant would take") -> None:
        """Raise `BudgetExceeded` when a constant of `shape` (or that many elements) and
        `dtype` (numpy dtype, WebNN type name or bytes per element) would be larger than
        the `max_constant_bytes` budget; call it BEFORE allocating the array."""
        self.meter.check_constant(shape_bytes(shape, dtype), subject)

    def unrolling(self, what: str, trip: int | None, body_nodes: int,
                  max_trip: int | None = None) -> Unrolling:
        """A loop about to be unrolled (`converter.importer.metering.Unrolling`): checks the
        trip count and iterations x body nodes now; use it as a context manager around the
        iterations and call `step()` before each one."""
        return Unrolling(self.meter, what, trip, body_nodes, max_trip)

    # -- values ----------------------------------------------------------------------
    def has(self, name: str) -> bool:
        return bool(name) and (name in self.consts or name in self.operands)

    def is_constant(self, name: str) -> bool:
        if not name:
            return False
        if name in self.consts:
            return True
        self.queried.add(name)
        return False

    def is_bool(self, name: str) -> bool:
        """True when value `name` is a source bool carried as a uint8 operand."""
        return name in self.bool_values

    def const_value(self, name: str) -> np.ndarray:
        """The numpy value of a constant value; RequiresConstantInput otherwise."""
        if name in self.consts:
            return self.consts[name]
        self.queried.add(name)
        err = RequiresConstantInput(f"input {name!r} must be known at conversion time, but it "
                                    "depends on graph inputs")
        err.value_name = name
        raise err

    def const_input(self, node: Node, index: int, default: Any = None) -> Any:
        """The constant value of input `index`, or `default` when the input is omitted."""
        name = node.input(index)
        if not name:
            return default
        try:
            return self.const_value(name)
        except RequiresConstantInput as exc:
            err = RequiresConstantInput(f"input {index} ({name!r}) must be known at conversion "
                                        "time, but it depends on graph inputs")
            err.value_name = name
            raise err from exc

    def operand(self, name: str) -> MLOperand:
        """The operand of a value (constants are materialised in the builder on first use)."""
        if name in self.operands:
            return self.operands[name]
        if name in self.consts:
            operand = self.constant(self.consts[name], what=f"constant {name!r}",
                                    produced=False)
            self.operands[name] = operand
            return operand
        raise InternalError(f"value {name!r} was never produced")

    @overload
    def inputs(self, node: Node, optional: tuple[()] = ...) -> list[MLOperand]: ...

    @overload
    def inputs(self, node: Node, optional: Iterable[int] = ...) -> list[MLOperand | None]: ...

    def inputs(self, node: Node, optional: Iterable[int] = ()
               ) -> list[MLOperand] | list[MLOperand | None]:
        """Operands of every input of `node`. Positions in `optional` give None when the
        input is omitted; an omitted required input is an InvalidModel error (so without
        `optional` every item is an operand)."""
        opt = set(optional)
        out: list[MLOperand | None] = []
        for i, name in enumerate(node.inputs):
            if not name:
                if i not in opt:
                    raise InvalidModel(f"required input {i} is missing")
                out.append(None)
            else:
                out.append(self.operand(name))
        for i in sorted(opt):
            if i >= len(out):
                out.extend([None] * (i + 1 - len(out)))
        return out

    def required(self, node: Node, index: int) -> MLOperand:
        """The operand of input `index`; InvalidModel when the node omits it (as `inputs`)."""
        name = node.input(index)
        if not name:
            raise InvalidModel(f"required input {index} is missing")
        return self.operand(name)

    def optional(self, node: Node, index: int) -> MLOperand | None:
        """The operand of input `index`, or None when the node omits it."""
        name = node.input(index)
        return self.operand(name) if name else None

    def value(self, name: str) -> Value:
        """The constant value (numpy) of `name` when it is a constant, else its operand."""
        if name in self.consts:
            return self.consts[name]
        return self.operand(name)

    def run_subgraph(self, graph: Any, bindings: Sequence[Value | str | None],
                     tag: str = "") -> list[Value]:
        """Convert subgraph `graph` of the source format (an ONNX GraphProto, a TFLite
        subgraph index) inline, its i-th input bound to `bindings[i]` (a value name, a numpy
        constant or an operand; None leaves it unbound), and return its outputs: numpy
        arrays for constants, operands otherwise. Values of the enclosing scopes are visible
        by name. Errors of the subgraph's nodes are raised as one ConversionError naming the
        first failed inner node. Only available while importing (not while folding)."""
        if self._run_subgraph is None:
            raise InternalError("run_subgraph is only available while importing (not folding)")
        return self._run_subgraph(graph, bindings, tag)

    def shared(self, kind: type[T]) -> T:
        """The conversion-wide instance of handler state class `kind` (created with
        `kind()` on first use; the same object for every context of this import)."""
        if kind not in self._shared:
            self._shared[kind] = kind()
        obj: T = self._shared[kind]
        return obj

    def shape(self, name: str) -> tuple[int, ...]:
        if name in self.operands:
            return self.operands[name].shape
        if name in self.consts:
            return tuple(int(d) for d in self.consts[name].shape)
        raise InternalError(f"value {name!r} was never produced")

    def dtype(self, name: str) -> str:
        """The WebNN data type the value has (or will have) inside the graph."""
        if name in self.operands:
            return self.operands[name].data_type
        value = self.const_value(name)
        return carrier_type(dtype_str(value)) or dtype_str(value)

    # -- creating things --------------------------------------------------------------
    def constant(self, value: Any, data_type: str | None = None, *,
                 what: str = "constant", produced: bool = True) -> MLOperand:
        """A new builder constant in its WebNN carrier type (`carrier_type`: bool -> uint8,
        float64 -> float32 with a warning). Its bytes count against the budgets: the total
        always, one constant's budget when `produced` (made by a handler, not a value of
        the model or one already folded)."""
        arr = np.asarray(value)
        subject = f"the {what} would take" if what == "constant" else f"{what} would take"
        if not self.folding:  # a scratch builder's constants live only while it folds
            self.meter.add_constant(int(arr.nbytes), single=produced, subject=subject)
        elif produced:
            self.meter.check_constant(int(arr.nbytes), subject)
        if data_type is not None:
            arr = arr.astype(data_type)
        dt = dtype_str(arr)
        target = carrier_type(dt)
        if target is None:
            raise UnsupportedDataType(f"{what} has data type {dt}, which WebNN does not have")
        if target != dt:
            if dt == "float64":  # bool -> uint8 is exact, float64 -> float32 rounds
                self.warn(f"{what} converted from float64 to float32")
            arr = arr.astype(target)
        operand = self.builder.constant(arr)
        if operand.value is not None and not np.shares_memory(operand.value, arr):
            release_mapped_pages(arr)
        return operand

    def packed_constant(self, data: np.ndarray, data_type: str, shape: Sequence[int], *,
                        what: str = "constant") -> MLOperand:
        """A 4-bit ("int4" / "uint4") builder constant of `shape` from packed bytes (two
        values per byte, the first in the low nibble, row-major: `MLGraphBuilder.
        packed_constant`), used as they are, neither unpacked nor copied when read-only.
        Its bytes count against the total constant budget (a value of the model)."""
        if not self.folding:
            self.meter.add_constant(int(data.nbytes), single=False,
                                    subject=f"{what} would take")
        return self.builder.packed_constant(data, data_type, shape)

    def warn(self, message: str) -> None:
        """A conversion warning, prefixed with the current node (once per text)."""
        node = self.node
        prefix = f"{node.op_type} {node.name!r}: " if node is not None else ""
        add_warning(self.warnings, prefix + message)

    def unsupported(self, message: str, hint: str | None = None) -> UnsupportedAttribute:
        """An UnsupportedAttribute error for the current node (raise it)."""
        return UnsupportedAttribute(message, hint=hint)


def add_warning(warnings: list[str], message: str) -> None:
    """Append `message` to the report's `warnings` unless it is there already."""
    if message not in warnings:
        warnings.append(message)


def release_mapped_pages(arr: np.ndarray) -> None:
    """Drop the resident pages of a memory-mapped (read-only, file-backed) array once the
    builder holds its own copy: the process then holds each weight once, not twice. The
    mapping stays valid (pages are read again from the file if the array is used)."""
    import mmap

    base: Any = arr
    while base is not None and not isinstance(base, mmap.mmap):
        mapped = getattr(base, "_mmap", None) if isinstance(base, np.memmap) else None
        if mapped is not None:
            base = mapped
            break
        base = getattr(base, "base", None)
    if isinstance(base, mmap.mmap) and hasattr(base, "madvise"):
        try:
            base.madvise(mmap.MADV_DONTNEED)
        except (OSError, ValueError, AttributeError):
            pass


def dtype_str(arr: np.ndarray) -> str:
    dtype = arr.dtype
    if dtype.kind in "OSU":
        return "string"
    return dtype_name(dtype)


