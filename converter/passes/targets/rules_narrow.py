"""Rule narrow-int64 (limits-driven): 64-bit integers computed in 32 bits where the target's
`opSupportLimits()` lacks them (int64 -> int32, uint64 -> uint32;
`converter.core.webnn.dtypes.NARROWED_TYPES`).

Two ways, chosen per graph and 64-bit type by `plan_narrowing`:

- The whole graph (when the target cannot carry the 64-bit type at all: its `input`,
  `constant` or `output` limits lack it where the graph has such an operand, or an operation
  lacks it and `cast` cannot convert between the two types): every operand of the type gets
  the 32-bit one. Graph inputs become 32-bit inputs (recorded in
  `MLGraph.narrowed_inputs`; the feeds and the generated JavaScript convert the values
  callers give with a range check), outputs 32-bit outputs (`MLGraph.narrowed_outputs`;
  converted back), constants are converted after checking every value fits (a value that
  does not is refused with one line naming the constant, the operation reading it and the
  value), and operations that name the type (cast, argMax/argMin `outputDataType`) name the
  32-bit one; clamp bounds outside the 32-bit range are saturated (same result on values
  that fit), a pad value outside it is refused.
- One operation (when the target has the type for inputs, constants, outputs and casts but
  an operation lacks it for some operand): its 64-bit operands are cast down, it runs on
  the 32-bit type and its 64-bit outputs are cast back.

Restrictions: exact only while every value the graph computes fits the 32-bit type.
Indices, positions and token ids do; integer arithmetic whose results leave the 32-bit range
(mul, pow, cumulativeSum, reduceSum/reduceProduct over large values) wraps around instead of
giving the 64-bit result, and values that only a run reveals are not checked (the report
note says so).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from converter.core.errors import UnsupportedDataType
from converter.core.webnn import MLGraph, MLOperand
from converter.core.webnn.dtypes import NARROWED_TYPES
from converter.core.webnn.limits import OP_LIMITS
from converter.core.webnn.operand import Operation
from converter.passes.targets.rewrite import Rewrite, retyping, rule
from converter.passes.targets.roles import all_roles, allows, operand_places, replace_operands

NAME = "narrow-int64"
WHY = "the target's opSupportLimits() has no 64-bit integers there"
TYPE_OPTIONS: Mapping[str, tuple[int | str, ...]] = {
    "cast": (1,), "argMax": ("outputDataType",), "argMin": ("outputDataType",)}
"""Where an operation names a data type: positional index or option name."""
RESTRICTION = ("exact while values fit; 64-bit arithmetic that leaves the 32-bit range wraps "
               "around")


def _bounds(narrow: str) -> tuple[int, int]:
    info = np.iinfo(np.dtype(narrow))
    return int(info.min), int(info.max)


def _lacks(rw: Rewrite, operation: Operation, wide: str) -> bool:
    """Whether the target lacks `wide` for an operand of `operation` that has it, while
    having the narrow type there (so narrowing helps)."""
    narrow = NARROWED_TYPES[wide]
    op = operation.op
    if not isinstance(rw.limits.get(op), Mapping):
        return False
    for role, operand in all_roles(rw.limits, operation):
        if operand.data_type == wide and not rw.supports(op, role, wide) and \
                rw.supports(op, role, narrow):
            return True
    return False


def _casts(rw: Rewrite, wide: str) -> bool:
    narrow = NARROWED_TYPES[wide]
    return all(rw.supports("cast", "input", t) and rw.supports("cast", "output", t)
               for t in (wide, narrow))


def plan_narrowing(rw: Rewrite, graph: MLGraph) -> dict[str, str]:
    """{wide: narrow} for the 64-bit types the whole graph must be narrowed from on
    `rw.target` (see the module docstring); {} when none (per-operation narrowing, if any,
    is left to the rule)."""
    if not rw.limits:
        return {}
    plan = {}
    for wide, narrow in NARROWED_TYPES.items():
        where = [("input", o) for o in graph.inputs.values()] + \
            [("constant", o) for o in graph.constants] + \
            [("output", o) for o in graph.outputs.values()]
        carried = all(allows(rw.limits.get(role), wide) for role, o in where
                      if o.data_type == wide)
        lacking = any(_lacks(rw, operation, wide) for operation in graph.operations)
        if not carried or (lacking and not _casts(rw, wide)):
            plan[wide] = narrow
    if plan:
        _check_constants(rw, graph, plan)
        _check_options(rw, graph, plan)
    return plan


def _readers(graph: MLGraph) -> dict[int, tuple[int, Operation]]:
    """The first operation (index, record) reading each operand, by id."""
    out: dict[int, tuple[int, Operation]] = {}
    for index, operation in enumerate(graph.operations):
        for _, operand, _, _ in operand_places(operation):
            out.setdefault(id(operand), (index, operation))
    return out


def _describe(index: int, operation: Operation) -> str:
    label = operation.options.get("label")
    return f"{operation.op} {label!r}" if label else f"{operation.op} #{index}"


def _refuse(rw: Rewrite, what: str, wide: str, narrow: str, value: int) -> UnsupportedDataType:
    lo, hi = _bounds(narrow)
    return UnsupportedDataType(
        f"{rw.target.name}: {what} holds {value}, outside {narrow} [{lo}, {hi}]; the target "
        f"has no {wide} there, so the graph cannot be narrowed to {narrow}",
        hint=f"give the model values that fit {narrow}, or a target with {wide}")


def _check_constants(rw: Rewrite, graph: MLGraph, plan: Mapping[str, str]) -> None:
    """Refuse (UnsupportedDataType) a constant of a narrowed type holding a value outside the
    narrow type, naming the constant, the operation reading it and the value."""
    readers = _readers(graph)
    for c in graph.constants:
        narrow = plan.get(c.data_type)
        if narrow is None or c.value is None or c.value.size == 0:
            continue
        lo, hi = _bounds(narrow)
        bad = (c.value < lo) | (c.value > hi)
        if not bad.any():
            continue
        value = int(c.value[bad].flat[0])
        shape = "x".join(map(str, c.shape)) or "scalar"
        name = f"constant {c.name!r}" if c.name else "constant"
        reader = readers.get(id(c))
        read = f" read by {_describe(*reader)}" if reader is not None else ""
        raise _refuse(rw, f"{name} ({c.data_type} [{shape}]){read}", c.data_type, narrow,
                      value)


def _check_options(rw: Rewrite, graph: MLGraph, plan: Mapping[str, str]) -> None:
    """Refuse a pad of a narrowed type whose padding value lies outside the narrow type."""
    for index, operation in enumerate(graph.operations):
        if operation.op != "pad" or operation.outputs[0].data_type not in plan:
            continue
        wide = operation.outputs[0].data_type
        value = operation.options.get("value")
        lo, hi = _bounds(plan[wide])
        if isinstance(value, (int, float, np.number)) and not lo <= value <= hi:
            raise _refuse(rw, f"{_describe(index, operation)}'s padding value", wide,
                          plan[wide], int(value))


@retyping(NAME)
def narrow_graph(rw: Rewrite, graph: MLGraph) -> dict[str, str]:
    """The graph-level part of narrow-int64 (`plan_narrowing`), noted in the report."""
    plan = plan_narrowing(rw, graph)
    if plan:
        rw.where = "graph"
        shown = ", ".join(f"{w} as {n}" for w, n in plan.items())
        io = ""
        for kind, names in (("inputs", graph.inputs), ("outputs", graph.outputs)):
            narrowed = sorted(n for n, o in names.items() if o.data_type in plan)
            if narrowed:
                io += f"; {kind} {', '.join(map(repr, narrowed))} narrowed too"
        if io:
            io += (" (callers' values converted with a range check, outputs converted back; "
                   "MLGraph.narrowed_inputs / narrowed_outputs)")
        rw.note(NAME, f"every {shown}{io}; {RESTRICTION}")
        rw.applied[NAME] = rw.applied.get(NAME, 0) + 1
    return plan


def _renamed_types(operation: Operation, args: list[Any], options: dict[str, Any],
                   plan: Mapping[str, str]) -> bool:
    """Map the data types an operation names (cast's type, argMax's outputDataType) by
    `plan`, in place; whether one changed."""
    changed = False
    for where in TYPE_OPTIONS.get(operation.op, ()):
        if isinstance(where, int):
            if where < len(args) and args[where] in plan:
                args[where] = plan[args[where]]
                changed = True
        elif options.get(where) in plan:
            options[where] = plan[options[where]]
            changed = True
    return changed


def _retype(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """In a narrowed graph: an operation naming a narrowed type names the narrow one; clamp
    bounds beyond the narrow type are saturated."""
    args, options = list(operation.args), dict(operation.options)
    changed = _renamed_types(operation, args, options, rw.retype)
    if operation.op == "clamp":
        x = operation.args[0]
        narrow = x.data_type if x.data_type in rw.retype.values() else None
        if narrow is not None:
            lo, hi = _bounds(narrow)
            for key in ("minValue", "maxValue"):
                value = options.get(key)
                if isinstance(value, (int, float, np.number)) and not lo <= value <= hi:
                    options[key] = min(max(value, lo), hi)
                    changed = True
    if not changed:
        return None
    return rw.emit(operation.op, args, options)


def _narrow_one(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """One operation lacking a 64-bit type the target otherwise carries: run on the 32-bit
    type, inputs cast down (constants converted when their values fit), outputs cast back."""
    op = operation.op
    if op == "cast":
        return None
    plan = {w: n for w, n in NARROWED_TYPES.items() if w not in rw.retype and
            _lacks(rw, operation, w) and _casts(rw, w)}
    if not plan:
        return None
    for role, operand in all_roles(rw.limits, operation):
        narrow = plan.get(operand.data_type)
        if narrow is not None and not rw.supports(op, role, narrow):
            return None

    def down(role: str, operand: MLOperand) -> MLOperand:
        narrow = plan.get(operand.data_type)
        if narrow is None:
            return operand
        value = operand.value if operand.kind == "constant" else None
        if value is not None:
            lo, hi = _bounds(narrow)
            if value.size == 0 or (value.min() >= lo and value.max() <= hi):
                return rw.b.constant(np.array(value, dtype=narrow, order="C"), narrow)
        return rw.emit1("cast", operand, narrow)

    args, options = replace_operands(operation, down)
    _renamed_types(operation, args, options, plan)
    outs = rw.emit(op, args, options)
    result = [o if o.data_type == old.data_type else rw.emit1("cast", o, old.data_type)
              for o, old in zip(outs, operation.outputs, strict=True)]
    shown = ", ".join(f"{w} as {n}" for w, n in sorted(plan.items()))
    rw.note(NAME, f"{op} on {shown}; {RESTRICTION}")
    return result


@rule(NAME, *sorted(OP_LIMITS), limits=True, why=WHY)
def narrow_int64(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """int64 -> int32 and uint64 -> uint32 where the target lacks them (module docstring):
    in a graph narrowed whole, the operations naming a 64-bit type; otherwise one operation
    the target lacks the 64-bit type for, run on the 32-bit one between casts."""
    if not rw.limits:
        return None
    got = _retype(rw, operation) if rw.retype else None
    return got if got is not None else _narrow_one(rw, operation)


__all__ = ["NAME", "narrow_graph", "narrow_int64", "plan_narrowing"]
