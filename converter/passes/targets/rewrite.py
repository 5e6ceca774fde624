"""The rewrite machinery of `converter.passes.targets.passes`: the rule registry (`rule`,
`REGISTERED`), `Rewrite` (the state of one replay) and `replay` (a built graph through a fresh
builder, operation by operation, under a given ordered tuple of rules). The rules themselves
live in the `rules_*` modules; `converter.passes.targets.passes` imports them all and declares
the order they are tried in (`ORDER`), which is not the order they register in."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from converter.core.webnn import MLGraph, MLGraphBuilder, MLOperand, MLOperandDescriptor
from converter.core.webnn.operand import Operation
from converter.core.webnn.operators import operator
from converter.passes.targets.roles import allows

RuleFn = Callable[["Rewrite", Operation], "list[MLOperand] | None"]
RetypeFn = Callable[["Rewrite", MLGraph], "Mapping[str, str]"]
BoundaryFn = Callable[["Rewrite", MLGraph],
                      "tuple[Mapping[str, str], Mapping[str, str]]"]
MAX_DEPTH = 16


class RuleTarget(Protocol):
    """What the rewrite reads of a target (`converter.passes.targets.Target`: give
    `load_target(name)`): its name, the names of its rules and its `opSupportLimits()`."""

    @property
    def name(self) -> str: ...

    @property
    def rules(self) -> tuple[str, ...]: ...

    @property
    def limits(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class Rule:
    """A registered rewrite: `name`, the operators it looks at, what it works around (`why`,
    said in the report) and whether it follows from the limits alone (`limits`)."""

    name: str
    ops: frozenset[str]
    fn: RuleFn = field(repr=False)
    why: str
    limits: bool = False


REGISTERED: dict[str, Rule] = {}
"""Every rule registered with `rule`, by name (registration order means nothing:
`converter.passes.targets.passes.ORDER` orders them)."""


RETYPES: dict[str, RetypeFn] = {}
"""Graph-level data type maps by rule name (`retyping`)."""


def retyping(name: str) -> Callable[[RetypeFn], RetypeFn]:
    """Register the graph-level part of rule `name`: a function `(rw, graph) -> {wide: narrow}`
    that `replay` calls before the replay proper when the rule is active. Every operand of a `wide`
    type then has the `narrow` type in the new graph (inputs declared so, constants converted;
    the function checks that their values fit, and the rule re-types the operations that name
    a data type); rules may return outputs of the mapped type (`Rewrite.retyped`)."""

    def register(fn: RetypeFn) -> RetypeFn:
        RETYPES[name] = fn
        return fn

    return register


BOUNDARIES: dict[str, BoundaryFn] = {}
"""Graph input/output data type changes by rule name (`boundary`)."""


def boundary(name: str) -> Callable[[BoundaryFn], BoundaryFn]:
    """Register the graph-boundary part of rule `name`: a function `(rw, graph) -> (inputs,
    outputs)`, each `{graph input/output name: data type}`, that `replay` calls (after the
    `retyping` functions) when the rule is active. Each input named is declared with the
    given type and cast to its own type before anything reads it; each output named is cast
    to the given type. The function must name only types that hold every value of the
    operand's type (the casts are exact); `MLGraph.narrowed_inputs` / `narrowed_outputs`
    then record the type callers use."""

    def register(fn: BoundaryFn) -> BoundaryFn:
        BOUNDARIES[name] = fn
        return fn

    return register


def rule(name: str, *ops: str, why: str, limits: bool = False) -> Callable[[RuleFn], RuleFn]:
    """Register a rewrite rule for `ops` (see the module docstring); an operator name that is
    not a WebNN operator (`converter.core.webnn.operators.operator`) is a ValueError."""

    def register(fn: RuleFn) -> RuleFn:
        if name in REGISTERED:
            raise ValueError(f"rule {name!r} is registered twice")
        REGISTERED[name] = Rule(name, frozenset(operator(op).name for op in ops), fn, why, limits)
        return fn

    return register


@dataclass(frozen=True)
class Lowered:
    """What `replay` gives: the graph (the original when nothing was rewritten), one note per
    rule and kind of rewrite, and how many operations each rule rewrote."""

    graph: MLGraph
    notes: list[str]
    applied: dict[str, int]

    @property
    def changed(self) -> bool:
        return bool(self.applied)


def _describe(operation: Operation, index: int) -> str:
    label = operation.options.get("label")
    if label:
        return f"{operation.op} {label!r}"
    out = operation.outputs[0] if operation.outputs else None
    if out is None:
        return f"{operation.op} #{index}"
    return f"{operation.op} #{index} ({out.data_type} [{'x'.join(map(str, out.shape))}])"


class Rewrite:
    """The state of one `replay`: the new builder `b`, the target, the active rules (in the
    order they are tried) and the notes."""

    def __init__(self, graph: MLGraph, target: RuleTarget, rules: Sequence[Rule]) -> None:
        self.graph = graph
        self.target = target
        self.b = MLGraphBuilder(graph.context)
        self.limits: Mapping[str, Any] = target.limits
        self.by_op: dict[str, list[Rule]] = {}
        for r in rules:
            for op in r.ops:
                self.by_op.setdefault(op, []).append(r)
        self._notes: dict[tuple[str, str], list[str]] = {}
        self.applied: dict[str, int] = {}
        self.where = ""
        self._depth = 0
        self._current: list[str] = []
        self.retype: dict[str, str] = {}
        """Data types replaced graph-wide (`retyping`), e.g. {"int64": "int32"}."""

    def retyped(self, descriptor: MLOperandDescriptor) -> MLOperandDescriptor:
        """`descriptor` with its data type mapped by `retype`."""
        new = self.retype.get(descriptor.data_type)
        return descriptor if new is None else dataclasses.replace(descriptor, data_type=new)

    # -- limits --------------------------------------------------------------------------
    def supports(self, op: str, role: str, data_type: str, rank: int | None = None) -> bool:
        """Whether the target's opSupportLimits() lets `op`'s `role` be `data_type` (and
        `rank`); True for a target without limits or a role its limits do not list."""
        if not self.limits:
            return True
        lim = self.limits.get(op)
        if not isinstance(lim, Mapping):
            return False
        return allows(lim.get(role), data_type, rank)

    # -- emitting ------------------------------------------------------------------------
    def call(self, op: str, args: Sequence[Any], options: Mapping[str, Any]) -> list[MLOperand]:
        """Record spec operator `op` on the new builder (spec-ordered `args`, spec-named
        `options`, as `Operation` holds them), without the rules; its outputs as a list."""
        return self.b.apply(op, args, options)

    def emit(self, op: str, args: Sequence[Any], options: Mapping[str, Any] | None = None
             ) -> list[MLOperand]:
        """Record `op` on the new builder, then let the rules replace it; its outputs."""
        outputs = self.call(op, args, options or {})
        operation = outputs[0].operator
        assert operation is not None
        if self._depth >= MAX_DEPTH:
            raise RecursionError(f"{self.target.name}: rules nest deeper than {MAX_DEPTH} "
                                 f"levels at {self.where}")
        for r in self.by_op.get(op, ()):
            if r.name in self._current:
                continue  # a rule does not rewrite what it emits itself
            self._depth += 1
            self._current.append(r.name)
            try:
                got = r.fn(self, operation)
            finally:
                self._depth -= 1
                self._current.pop()
            if got is None:
                continue
            if len(got) != len(outputs) or any(
                    self.retyped(g.descriptor) != self.retyped(o.descriptor)
                    for g, o in zip(got, outputs, strict=False)):
                raise AssertionError(f"rule {r.name}: {op} rewritten to "
                                     f"{[g.descriptor for g in got]}, not "
                                     f"{[o.descriptor for o in outputs]}")
            self.applied[r.name] = self.applied.get(r.name, 0) + 1
            return got
        return outputs

    def emit1(self, op: str, *args: Any, **options: Any) -> MLOperand:
        """`emit` of a one-output op with spec-named keyword options."""
        return self.emit(op, args, options)[0]

    def const(self, value: Any, data_type: str) -> MLOperand:
        """A constant of `data_type` (numbers cast with the spec's rules)."""
        arr = np.asarray(value)
        return self.b.constant(arr if arr.dtype.kind in "iub" else arr.astype(np.float64),
                               data_type)

    def cast(self, x: MLOperand, data_type: str) -> MLOperand:
        """`x` as `data_type`: a cast operation, or for a constant widened to a type that
        holds its values (`WIDER`), the widened constant."""
        if x.data_type == data_type:
            return x
        if x.kind == "constant" and x.value is not None and \
                data_type in WIDER.get(x.data_type, ()):
            return self.b.constant(x.value.astype(data_type), data_type)
        return self.emit1("cast", x, data_type)

    def note(self, rule_name: str, text: str) -> None:
        """Record one rewrite of the current source operation by `rule_name`; `text` says
        what was done (operations sharing a text are listed in one note)."""
        where = self._notes.setdefault((rule_name, text), [])
        if self.where not in where:
            where.append(self.where)

    def notes(self) -> list[str]:
        out = []
        for (name, text), where in self._notes.items():
            shown = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3
                                            else "")
            out.append(f"{self.target.name}: {shown}: {text} ({REGISTERED[name].why}; rule "
                       f"{name})")
        return out


def _map(value: Any, new: Mapping[int, MLOperand]) -> Any:
    if isinstance(value, MLOperand):
        return new[id(value)]
    if isinstance(value, (list, tuple)) and any(isinstance(v, MLOperand) for v in value):
        return [new[id(v)] if isinstance(v, MLOperand) else v for v in value]
    return value


def _wider(old: Mapping[str, MLOperand], new: Mapping[str, MLOperand],
           before: Mapping[str, str]) -> dict[str, str]:
    """{name: the type callers use} for the operands of `new` whose type differs from
    `old`'s (or that an earlier lowering narrowed, `before`)."""
    return {name: before.get(name, old[name].data_type) for name, operand in new.items()
            if name in old and (name in before or operand.data_type != old[name].data_type)}


def replay(graph: MLGraph, target: RuleTarget, rules: Sequence[Rule]) -> Lowered:
    """`graph` rewritten for `target` by `rules`, tried in the order given (see
    `converter.passes.targets.passes`, whose `lower` gives them in its declared order)."""
    active = list(rules)
    ops = {op for r in active for op in r.ops}
    graph_level = [RETYPES[r.name] for r in active if r.name in RETYPES]
    bounds = [(r.name, BOUNDARIES[r.name]) for r in active if r.name in BOUNDARIES]
    if not graph_level and not bounds and not any(o.op in ops for o in graph.operations):
        return Lowered(graph, [], {})
    rw = Rewrite(graph, target, active)
    for fn in graph_level:
        rw.retype.update(fn(rw, graph))
    in_types: dict[str, str] = {}
    out_types: dict[str, str] = {}
    for rule_name, bound in bounds:
        got_in, got_out = bound(rw, graph)
        in_types.update(got_in)
        out_types.update(got_out)
        if got_in or got_out:
            rw.applied[rule_name] = rw.applied.get(rule_name, 0) + len(got_in) + len(got_out)
    b = rw.b
    new: dict[int, MLOperand] = {}
    for name, operand in graph.inputs.items():
        own = rw.retype.get(operand.data_type, operand.data_type)
        x = b.input(name, shape=list(operand.shape), data_type=in_types.get(name, own))
        if name in in_types:
            rw.where = f"input {name!r}"
            x = rw.emit1("cast", x, own)
        new[id(operand)] = x
    for c in graph.constants:  # read-only data: shared with the original graph
        if c.data_type in rw.retype:  # values checked by the retyping function
            assert c.value is not None
            narrow = rw.retype[c.data_type]
            value = np.array(c.value, dtype=narrow, order="C")  # keeps a scalar's rank 0
            value.flags.writeable = False
            new[id(c)] = MLOperand(b, rw.retyped(c.descriptor), "constant", value=value)
        elif c.packed is not None:  # 4-bit bytes shared as they are, never unpacked here
            new[id(c)] = MLOperand(b, c.descriptor, "constant", packed=c.packed)
        else:
            new[id(c)] = MLOperand(b, c.descriptor, "constant", value=c.value)
    for index, operation in enumerate(graph.operations):
        args = [_map(a, new) for a in operation.args]
        options = {k: _map(v, new) for k, v in operation.options.items()}
        rw.where = _describe(operation, index)
        outputs = rw.emit(operation.op, args, options)
        for old, got in zip(operation.outputs, outputs, strict=True):
            new[id(old)] = got
    if not rw.applied:
        return Lowered(graph, [], {})
    results: dict[str, MLOperand] = {}
    for name, operand in graph.outputs.items():
        got = new[id(operand)]
        if name in out_types:
            rw.where = f"output {name!r}"
            got = rw.emit1("cast", got, out_types[name])
        results[name] = got if got.kind == "output" else b.identity(got)
    built = b.build(results)
    order = {name: built.inputs[name] for name in graph.inputs if name in built.inputs}
    if list(order) != list(built.inputs):  # the original's input order
        built = dataclasses.replace(built, inputs=order)
    wide_in = _wider(graph.inputs, built.inputs, graph.narrowed_inputs)
    wide_out = _wider(graph.outputs, built.outputs, graph.narrowed_outputs)
    if wide_in or wide_out:
        built = dataclasses.replace(built, narrowed_inputs=wide_in, narrowed_outputs=wide_out)
    return Lowered(built, rw.notes(), dict(rw.applied))


# ============================================================================================
# Chromium (LiteRT) behaviour
# ============================================================================================


WIDER = {"int8": ("int32", "int64", "float32", "float16"),
         "uint8": ("int32", "int64", "float32", "float16"),
         "int32": ("int64",), "uint32": ("int64",), "float16": ("float32",)}
"""Types that hold every value of a type, nearest first."""
NOT_VALUES = frozenset({"indices", "condition"})
"""Roles whose operands are not values of the operation's type."""
