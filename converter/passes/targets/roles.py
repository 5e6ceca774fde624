"""The operands of a recorded WebNN operation by role, and whether one `opSupportLimits()`
entry takes a data type and rank: what `check` (is a built graph inside a target's limits),
`fitting` and the rules (`Rewrite.supports`, rules_types, rules_narrow, rules_io) all read
the limits with.

Roles are named as `opSupportLimits()` names them: the spec's parameter and option names for
what an operation reads (`input`, `indices`, `filter`, ...), `output`, `outputs` or
`output<i>` for what it makes (whichever the operator's limits list). A limits entry is a
mapping with optional `dataTypes` (a list) and `rankRange` ({min, max}).

Restrictions: an entry that is not a mapping (a role the limits do not list) takes
everything; a missing `min` / `max` of `rankRange` is 0 / unbounded. Registers no rule
(imported by `rewrite` and by the rule modules alike).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from converter.core.webnn import MLOperand
from converter.core.webnn.operand import Operation
from converter.core.webnn.operators import OPERATORS

Place = tuple[str, MLOperand, int, int]
"""(role, operand, position, index in a list or -1): where an operation holds an operand;
position counts args, then options in their order."""


def data_types(entry: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The `dataTypes` of a limits entry, None when it lists none."""
    types = entry.get("dataTypes")
    if isinstance(types, Sequence) and not isinstance(types, str):
        return tuple(str(t) for t in types)
    return None


def rank_range(entry: Mapping[str, Any]) -> tuple[int, int] | None:
    """The (min, max) `rankRange` of a limits entry, None when it gives none."""
    ranks = entry.get("rankRange")
    if isinstance(ranks, Mapping):
        return int(ranks.get("min", 0)), int(ranks.get("max", 1 << 30))
    return None


def allows(entry: object, data_type: str, rank: int | None = None) -> bool:
    """Whether a limits entry takes `data_type` (and `rank`, when given); True for an entry
    that is not a mapping (the role is not listed)."""
    if not isinstance(entry, Mapping):
        return True
    types = data_types(entry)
    if types is not None and data_type not in types:
        return False
    ranks = rank_range(entry)
    return rank is None or ranks is None or ranks[0] <= rank <= ranks[1]


def operand_places(operation: Operation) -> list[Place]:
    """Where `operation` holds each operand it reads (see `Place`), in args-then-options
    order, the operands of a list option one by one."""
    sig = OPERATORS.get(operation.op)
    names = [p.spec_name for p in sig.positional] if sig else []
    out: list[Place] = []
    items = [*zip(names, operation.args, strict=False), *operation.options.items()]
    for pos, (role, value) in enumerate(items):
        if isinstance(value, MLOperand):
            out.append((role, value, pos, -1))
        elif isinstance(value, (list, tuple)):
            out += [(role, v, pos, i) for i, v in enumerate(value) if isinstance(v, MLOperand)]
    return out


def operand_roles(operation: Operation) -> list[tuple[str, MLOperand]]:
    """(role, operand) for every operand `operation` reads (see `operand_places`)."""
    return [(role, operand) for role, operand, _, _ in operand_places(operation)]


def output_role(entry: object, index: int) -> str:
    """The limits' role of output `index` of an operator whose limits entry is `entry`:
    `output` or `outputs` when the entry lists it, else `output<index>`."""
    if isinstance(entry, Mapping):
        if "output" in entry:
            return "output"
        if "outputs" in entry:
            return "outputs"
    return f"output{index}"


def all_roles(limits: Mapping[str, Any], operation: Operation) -> list[tuple[str, MLOperand]]:
    """(role, operand) for every operand `operation` reads, then for each of its outputs."""
    entry = limits.get(operation.op)
    return [*operand_roles(operation),
            *((output_role(entry, i), o) for i, o in enumerate(operation.outputs))]


def replace_operands(operation: Operation, fn: Callable[[str, MLOperand], MLOperand]
                     ) -> tuple[list[Any], dict[str, Any]]:
    """`operation`'s args and options (new lists and dict) with each operand it reads replaced
    by `fn(role, operand)` at its place (a list option's items one by one)."""
    args: list[Any] = list(operation.args)
    options = dict(operation.options)
    keys = list(options)
    for role, operand, pos, i in operand_places(operation):
        new = fn(role, operand)
        if new is operand:
            continue
        if pos < len(args):
            if i < 0:
                args[pos] = new
            else:
                args[pos] = list(args[pos])
                args[pos][i] = new
        else:
            key = keys[pos - len(args)]
            if i < 0:
                options[key] = new
            else:
                options[key] = list(options[key])
                options[key][i] = new
    return args, options


__all__ = ["Place", "all_roles", "allows", "data_types", "operand_places", "operand_roles",
           "output_role", "rank_range", "replace_operands"]
