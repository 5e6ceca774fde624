"""What the composing rules share (`converter.passes.targets.rules_compose`, `rules_casts`,
`rules_rank`, `rules_layout`): whether an operation fits a target's `opSupportLimits()`
(`fits`), a rewrite tried and kept only when everything it emits fits (`attempt`), and a
builder whose every operator call goes through the rules again (`Via`).

`attempt` is what lets a rule compose an operation from others without knowing what every
other rule does: the replacement is emitted (other rules rewriting its pieces, e.g. a float16
piece computed in float32), then the operations reachable from its outputs back to the
operation's own operands are checked against the limits; when one does not fit, the notes
and counts the trial recorded are dropped and the rule declines (the operations it recorded
are unreachable, so `build()` leaves them out).

Restrictions: `fits` checks operator presence, every operand role's data type and rank
(`rankRange`); it does not check `maxTensorByteLength` nor the data types of new constants.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from converter.core.webnn import MLOperand
from converter.core.webnn.errors import MLTypeError
from converter.core.webnn.operand import Operation
from converter.core.webnn.operators import operator
from converter.passes.targets.rewrite import Rewrite
from converter.passes.targets.roles import all_roles


def misfits(rw: Rewrite, operation: Operation) -> list[tuple[str, str, int]]:
    """(role, data type, rank) of every operand of `operation` outside the target's limits;
    [("", "", 0)] when the target lacks the operator; [] when it fits."""
    if not rw.limits:
        return []
    if not isinstance(rw.limits.get(operation.op), Mapping):
        return [("", "", 0)]
    return [(role, x.data_type, x.rank) for role, x in all_roles(rw.limits, operation)
            if not rw.supports(operation.op, role, x.data_type, x.rank)]


def fits(rw: Rewrite, operation: Operation) -> bool:
    """Whether the target's limits allow `operation` as it is (see `misfits`)."""
    return not misfits(rw, operation)


def emitted(outputs: Sequence[MLOperand], stop: Sequence[MLOperand]) -> list[Operation]:
    """The operations reachable from `outputs` without passing through `stop` (the operands
    a rewrite started from), inputs or constants."""
    seen_ops: dict[int, Operation] = {}
    stop_ids = {id(x) for x in stop}
    todo = list(outputs)
    seen: set[int] = set()
    while todo:
        x = todo.pop()
        if id(x) in seen or id(x) in stop_ids or x.operator is None:
            continue
        seen.add(id(x))
        op = x.operator
        if id(op) not in seen_ops:
            seen_ops[id(op)] = op
            todo.extend(op.operand_inputs())
    return list(seen_ops.values())


class Decline(Exception):
    """Raised inside an `attempt`'s build: the rewrite does not apply after all."""


def attempt(rw: Rewrite, operation: Operation, rule_name: str, text: str,
            build: Callable[[], list[MLOperand]]) -> list[MLOperand] | None:
    """`build()`'s outputs when every operation they need (back to `operation`'s operands)
    fits the target's limits, the rewrite noted as `text`; else None (also when `build`
    raises `Decline` or the builder's MLTypeError), with whatever the trial recorded in the
    notes and counts dropped."""
    applied = dict(rw.applied)
    notes = {k: list(v) for k, v in rw._notes.items()}  # noqa: SLF001 - the trial's undo
    try:
        outs = build()
    except (MLTypeError, Decline):
        outs = None
    if outs is not None and all(fits(rw, o) for o in
                                emitted(outs, list(operation.operand_inputs()))):
        rw.note(rule_name, text)
        return outs
    rw.applied.clear()
    rw.applied.update(applied)
    rw._notes.clear()  # noqa: SLF001
    rw._notes.update(notes)  # noqa: SLF001
    return None


class Via:
    """A stand-in for `rw.b` (`MLGraphBuilder`) whose operator methods record the operator
    and then emit it again through the rules (`Rewrite.emit`); `input`, `constant` and the
    operators named in `raw` (a decomposition's own validation call of the operator it
    replaces) go to the builder directly."""

    def __init__(self, rw: Rewrite, raw: Sequence[str] = ()) -> None:
        self._rw = rw
        self._raw = frozenset(raw)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._rw.b, name)
        if name in ("input", "constant", "build") or name.startswith("_") or \
                not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            result = attr(*args, **kwargs)
            many = isinstance(result, (list, tuple))
            outs = list(result) if many else [result]
            op = outs[0].operator if outs else None
            if op is None or op.op in self._raw:
                return result
            got = self._rw.emit(op.op, op.args, op.options)
            return got if many else got[0]

        return call


def py_options(operation: Operation) -> dict[str, Any]:
    """`operation.options` under the builder's keyword names, less `label`."""
    sig = operator(operation.op)
    return {sig.options[k].py_name: v for k, v in operation.options.items()
            if k in sig.options and k != "label"}
