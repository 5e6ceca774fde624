"""Rank limits (see `converter.passes.targets.passes`): an operation whose operands have a higher rank
than the target's `rankRange` allows, run on reshaped operands of a lower rank and reshaped
back, where that is exact:

- elementwise operators (unary, binary with broadcasting, where): adjacent axes merge when
  every operand is either whole or broadcast (size 1) along both (same-shape operands become
  1-D);
- transpose: input axes that stay next to each other, in order, under the permutation merge;
- reductions: adjacent axes merge when both are reduced or both kept.

Restrictions: other operators (gather, slice, concat, ...) are left as they are; when merging
does not bring every operand inside the limits the operation is left unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from converter.core.webnn import MLOperand
from converter.core.webnn.operand import Operation
from converter.core.webnn.operators import FAMILIES
from converter.passes.targets.axes import merged_shape, transpose_runs
from converter.passes.targets.fitting import attempt, misfits
from converter.passes.targets.rewrite import Rewrite, rule

UNARY, BINARY, REDUCE = FAMILIES["unary"], FAMILIES["binary"], FAMILIES["reduce"]


def _groups(keys: Sequence[tuple[object, ...] | None]) -> list[list[int]]:
    """Runs of adjacent axes with equal keys (a key None joins any run)."""
    groups: list[list[int]] = []
    last: tuple[object, ...] | None = None
    for axis, key in enumerate(keys):
        if groups and (last is None or key is None or
                       all(a is None or b is None or a == b
                           for a, b in zip(key, last, strict=True))):
            groups[-1].append(axis)
            if key is not None:
                last = tuple(b if a is None else a for a, b in
                             zip(key, last or key, strict=True))
        else:
            groups.append([axis])
            last = key
    return groups


def _reshape(rw: Rewrite, x: MLOperand, shape: Sequence[int]) -> MLOperand:
    return x if list(x.shape) == list(shape) else rw.emit1("reshape", x, list(shape))


def _elementwise(rw: Rewrite, o: Operation) -> list[MLOperand]:
    out = o.outputs[0]
    r = out.rank
    operands = [(i, v) for i, v in enumerate(o.args) if isinstance(v, MLOperand)]
    aligned = {i: [1] * (r - v.rank) + list(v.shape) for i, v in operands}
    keys: list[tuple[object, ...] | None] = []
    for axis in range(r):
        if out.shape[axis] == 1:
            keys.append(None)
        else:
            keys.append(tuple(aligned[i][axis] == out.shape[axis] for i, _ in operands))
    groups = _groups(keys)
    args = list(o.args)
    for i, _v in operands:
        args[i] = _reshape(rw, args[i], merged_shape(aligned[i], groups))
    y = rw.emit(o.op, args, o.options)[0]
    return [_reshape(rw, y, out.shape)]


def _transpose(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x = o.args[0]
    groups, new_perm = transpose_runs(o.options["permutation"])
    y = rw.emit1("transpose", _reshape(rw, x, merged_shape(x.shape, groups)),
                 permutation=new_perm)
    return [_reshape(rw, y, o.outputs[0].shape)]


def _reduce(rw: Rewrite, o: Operation) -> list[MLOperand]:
    x = o.args[0]
    axes = o.options["axes"]
    axes = set(range(x.rank)) if axes is None else set(axes)
    keys: list[tuple[object, ...] | None] = [
        None if x.shape[a] == 1 else (a in axes,) for a in range(x.rank)]
    groups = _groups(keys)
    new_axes = [k for k, g in enumerate(groups) if any(a in axes for a in g)]
    options = dict(o.options, axes=new_axes, keepDimensions=False)
    y = rw.emit(o.op, [_reshape(rw, x, merged_shape(x.shape, groups))], options)[0]
    return [_reshape(rw, y, o.outputs[0].shape)]


@rule("rank-limits", *UNARY, *BINARY, "transpose", *REDUCE, limits=True,
      why="above the target's rankRange")
def rank_limits(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """An operation above the target's rank limits, run on merged axes (see the module
    docstring)."""
    if not rw.limits:
        return None
    bad = misfits(rw, operation)
    if not bad or any(role == "" for role, _, _ in bad):
        return None
    top = max(x.rank for x in operation.outputs)
    if not any(rank >= top and rank > 1 for _, _, rank in bad):
        return None  # a data type, or a rank below the range: not this rule's business
    op = operation.op
    fn = _transpose if op == "transpose" else _reduce if op in REDUCE else _elementwise
    return attempt(rw, operation, "rank-limits", f"{op} on merged axes",
                   lambda: fn(rw, operation))
