"""Rules that follow from a target's `opSupportLimits()` alone: run an op on a wider data type
that holds every value where the target lacks the narrow one, and the min/max forms of clamp,
abs and unsigned reduceL1 (see `converter.passes.targets.passes`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from converter.core.webnn import MLOperand
from converter.core.webnn.operand import Operation
from converter.passes.targets.rewrite import NOT_VALUES, WIDER, Rewrite, rule
from converter.passes.targets.roles import all_roles, operand_places, output_role, replace_operands

MOVEMENT = frozenset({"concat", "expand", "gather", "gatherElements", "gatherND", "identity",
                      "pad", "reshape", "reverse", "scatterElements", "scatterND", "slice",
                      "split", "tile", "transpose", "triangular", "where"})
"""Operators that only move values: exact in any type that holds the values."""
ORDER = frozenset({"argMax", "argMin", "clamp", "equal", "greater", "greaterOrEqual",
                   "lesser", "lesserOrEqual", "max", "maxPool2d", "min", "notEqual",
                   "reduceMax", "reduceMin", "relu", "sign"})
"""Operators that compare or pick values: exact in any type that holds the values in order."""
COMPARISONS = frozenset({"equal", "greater", "greaterOrEqual", "lesser", "lesserOrEqual",
                         "notEqual"})
"""Operators whose output is uint8 (a boolean) whatever the type they compare."""
MODULAR = frozenset({"abs", "add", "cumulativeSum", "div", "mul", "neg", "reduceProduct",
                     "reduceSum", "sub"})
"""Integer arithmetic: exact in a wider integer type, the result cast back (int -> int casts
keep the low bits, so wrap-around is the same)."""


def _unsupported(rw: Rewrite, operation: Operation) -> set[str]:
    """Data types of value operands (inputs and outputs) the target's limits lack."""
    return {operand.data_type for role, operand in all_roles(rw.limits, operation)
            if role not in NOT_VALUES and not rw.supports(operation.op, role, operand.data_type)}


def _wide_type(rw: Rewrite, operation: Operation, narrow: str,
               wider: Mapping[str, Sequence[str]] = WIDER) -> str | None:
    """The nearest of `wider[narrow]` (by default the types that hold `narrow`'s values
    exactly, integer arithmetic only on wider integers) usable for this operation: inside the
    limits for every role `narrow` takes, and castable to and from."""
    op = operation.op
    integer_only = op in MODULAR and wider is WIDER
    roles = {role for role, operand, _, _ in operand_places(operation)
             if operand.data_type == narrow and role not in NOT_VALUES}
    outs = [output_role(rw.limits.get(op), i) for i, o in enumerate(operation.outputs)
            if o.data_type == narrow and op not in COMPARISONS]
    for wide in wider.get(narrow, ()):
        if integer_only and wide.startswith("float"):
            continue
        if all(rw.supports(op, r, wide) for r in [*roles, *outs]) and \
                rw.supports("cast", "input", narrow) and rw.supports("cast", "output", wide) \
                and (not outs or (rw.supports("cast", "input", wide)
                                  and rw.supports("cast", "output", narrow))):
            return wide
    return None


def plan_types(rw: Rewrite, operation: Operation,
               wider: Mapping[str, Sequence[str]] = WIDER) -> dict[str, str] | None:
    """{narrow: wide} for every value data type of `operation` outside the target's limits,
    each the nearest of `wider[narrow]` the limits allow for every role that type takes
    (see `_wide_type`); None when there is nothing to do or some type has no such wide type."""
    bad = _unsupported(rw, operation)
    if not bad:
        return None
    plan = {}
    for narrow in bad:
        wide = _wide_type(rw, operation, narrow, wider)
        if wide is None:
            return None
        plan[narrow] = wide
    return plan


def run_as(rw: Rewrite, operation: Operation, plan: Mapping[str, str]) -> list[MLOperand]:
    """`operation` emitted again with its value operands of each type `narrow` in `plan` cast
    to `plan[narrow]` (constants converted at conversion time where that is exact), its
    outputs cast back to their types."""
    def cast(role: str, operand: MLOperand) -> MLOperand:
        if role in NOT_VALUES or operand.data_type not in plan:
            return operand
        return rw.cast(operand, plan[operand.data_type])

    args, options = replace_operands(operation, cast)
    outs = rw.emit(operation.op, args, options)
    return [rw.cast(o, old.data_type) for o, old in zip(outs, operation.outputs, strict=True)]


@rule("widen-types", *sorted(MOVEMENT | ORDER | MODULAR), limits=True,
      why="outside the target's opSupportLimits()")
def widen_types(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """An operation on a data type the target lacks, run on a wider type that holds its
    values (int8/uint8 -> int32/int64/float32, int32/uint32 -> int64, float16 -> float32;
    integer arithmetic only on wider integers): inputs cast up, outputs cast back."""
    if not rw.limits or operation.op not in (MOVEMENT | ORDER | MODULAR):
        return None
    plan = plan_types(rw, operation)
    if plan is None:
        return None
    result = run_as(rw, operation, plan)
    shown = ", ".join(f"{n} as {w}" for n, w in sorted(plan.items()))
    rw.note("widen-types", f"{operation.op} on {shown}")
    return result


def _reachable(rw: Rewrite, op: str, roles: Sequence[str], data_type: str) -> bool:
    """Whether `op` on `data_type` is inside the limits, directly or through widen-types."""
    if all(rw.supports(op, r, data_type) for r in roles):
        return True
    if "widen-types" not in rw.target.rules:
        return False
    return any(all(rw.supports(op, r, wide) for r in roles) and
               not (op in MODULAR and wide.startswith("float"))
               for wide in WIDER.get(data_type, ()))


@rule("reduce-l1-unsigned", "reduceL1", limits=True,
      why="outside the target's opSupportLimits()")
def reduce_l1_unsigned(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """reduceL1 of an unsigned type the target lacks: reduceSum (|x| = x)."""
    x = operation.args[0]
    if not rw.limits or x.data_type not in ("uint8", "uint32", "uint64") or \
            rw.supports("reduceL1", "input", x.data_type) or \
            not _reachable(rw, "reduceSum", ("input", "output"), x.data_type):
        return None
    rw.note("reduce-l1-unsigned", f"reduceL1 of {x.data_type} as reduceSum")
    return [rw.emit1("reduceSum", x, **operation.options)]


@rule("clamp-minmax", "clamp", limits=True,
      why="outside the target's opSupportLimits()")
def clamp_minmax(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """clamp on a type the target's clamp lacks: max with minValue, then min with maxValue."""
    x = operation.args[0]
    opt = operation.options
    if not rw.limits or rw.supports("clamp", "input", x.data_type) or not all(
            _reachable(rw, op, ("a", "b", "output"), x.data_type) for op in ("max", "min")):
        return None
    y = x
    if opt.get("minValue") is not None:
        y = rw.emit1("max", y, rw.const(np.array(opt["minValue"]).reshape(()), x.data_type))
    if opt.get("maxValue") is not None:
        y = rw.emit1("min", y, rw.const(np.array(opt["maxValue"]).reshape(()), x.data_type))
    if y is x:
        y = rw.emit1("identity", x)
    rw.note("clamp-minmax", f"clamp of {x.data_type} as max/min")
    return [y]


@rule("abs-minmax", "abs", limits=True,
      why="outside the target's opSupportLimits()")
def abs_minmax(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """abs on a signed integer type the target's abs lacks: max(x, neg(x))."""
    x = operation.args[0]
    if not rw.limits or x.data_type not in ("int8", "int32", "int64") or \
            rw.supports("abs", "input", x.data_type) or \
            not _reachable(rw, "neg", ("input", "output"), x.data_type) or \
            not _reachable(rw, "max", ("a", "b", "output"), x.data_type):
        return None
    rw.note("abs-minmax", f"abs of {x.data_type} as max(x, neg(x))")
    return [rw.emit1("max", x, rw.emit1("neg", x))]
