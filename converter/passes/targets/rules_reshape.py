"""Rule reshape-chains (limits-driven, see `converter.passes.targets.passes`): a chain of reshapes
and transposes that passes through a rank above the target's `rankRange` while its two
ends fit, rewritten so that no operand leaves the range.

`rules_rank` merges the axes of one operation whose operands are too high in rank, but a
reshape cannot lower the rank of what it makes, and a transpose whose input comes from such
a reshape only fits once the reshape is gone. The typical cases are depth-to-space (pixel
shuffle) as TFLite and ONNX exporters write it, e.g. `[1, 24, 24, 64]` reshaped to
`[1, 24, 24, 2, 2, 16]`, transposed by `[0, 1, 3, 2, 4, 5]` and reshaped to
`[1, 48, 48, 16]`, and the window / grid partitions of vision transformers (maxvit:
`[1, 64, 49, 64]` reshaped to `[1, 8, 8, 7, 7, 64]`, transposed by `[0, 5, 1, 3, 2, 4]`,
reshaped to `[1, 64, 7, 8, 7, 8]`, transposed by `[0, 2, 4, 3, 5, 1]`, reshaped to
`[1, 49, 64, 64]`): rank 6 in the middle, where Core ML stops at 5. The rule looks at the
last reshape of such a chain (when its output fits and its input does not) and walks back
through reshapes and transposes to the nearest operand `x` that fits. A reshape keeps the
row-major sequence of the elements, so only the transposes matter; each is planned as

- a reshape to its merged shape and a transpose on the merged axes (`merged_transpose`:
  axes of size 1 dropped, input axes that stay next to each other, in order, merged), when
  that rank fits (nothing at all when the merged permutation is the identity);
- otherwise a sequence of single-axis moves in insertion order (at most rank - 1): moving
  the axis at position `j` to position `i < j` is a reshape to the rank-4 view
  `[prod(before), prod(between), axis, prod(after)]` transposed by `[0, 2, 1, 3]` (itself
  merged, so rank 3 or less).

Consecutive reshapes of the plan are merged into one, the last reshape gives the chain's
output shape. The plan is emitted only when every operation in it fits the target's
limits (data type and rank of each role, checked before anything is emitted); the
operations of the old chain are then unreachable and `build()` leaves them out. Exact: only
data movement, no arithmetic.

Restrictions: a chain with anything but reshapes and transposes between `x` and the last
reshape (an elementwise operation, a slice), or whose start does not fit either, is left as
it is, and so is a chain whose intermediate operand is also used elsewhere in a way that
still needs the high rank (that use stays outside the limits and `check_graph` reports it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from converter.core.webnn import MLOperand
from converter.core.webnn.operand import Operation
from converter.passes.targets.axes import merged_shape, transpose_runs
from converter.passes.targets.rewrite import Rewrite, rule

NAME = "reshape-chains"


def _fits_rank(rw: Rewrite, op: str, role: str, x_type: str, rank: int) -> bool:
    return rw.supports(op, role, x_type, rank)


def _reshape_fits(rw: Rewrite, data_type: str, rank_in: int, rank_out: int) -> bool:
    return _fits_rank(rw, "reshape", "input", data_type, rank_in) and \
        _fits_rank(rw, "reshape", "output", data_type, rank_out)


def _transpose_fits(rw: Rewrite, data_type: str, rank: int) -> bool:
    return _fits_rank(rw, "transpose", "input", data_type, rank) and \
        _fits_rank(rw, "transpose", "output", data_type, rank)


def merged_transpose(shape: Sequence[int], permutation: Sequence[int]
                     ) -> tuple[list[int], list[int]]:
    """(merged input shape, permutation on the merged axes) of a transpose of `shape` by
    `permutation`: axes of size 1 dropped, then input axes that stay next to each other,
    in order, under the permutation merged into one. Transposing a tensor of the merged
    shape by the merged permutation gives the same elements in the same row-major order."""
    kept = [a for a in range(len(shape)) if shape[a] != 1]
    renumber = {a: i for i, a in enumerate(kept)}
    perm = [renumber[a] for a in permutation if a in renumber]
    groups, merged_perm = transpose_runs(perm)
    return merged_shape([shape[a] for a in kept], groups), merged_perm


@dataclass(frozen=True)
class Step:
    """One planned operation: `reshape` to `shape`, or `transpose` by `permutation`."""

    op: str
    shape: tuple[int, ...] = ()
    permutation: tuple[int, ...] = ()


def axis_moves(shape: Sequence[int], permutation: Sequence[int]) -> list[Step]:
    """A transpose of `shape` by `permutation` as single-axis moves in insertion order (at
    most rank - 1), each a reshape to the view `[prod(before), prod(between), axis,
    prod(after)]` and the transpose `[0, 2, 1, 3]`, merged (`merged_transpose`)."""
    steps: list[Step] = []
    current = list(range(len(shape)))  # the original axis at each position
    sizes = [int(d) for d in shape]
    for i, axis in enumerate(permutation):
        j = current.index(axis)
        if j == i:
            continue
        view = [math.prod(sizes[:i]), math.prod(sizes[i:j]), sizes[j], math.prod(sizes[j + 1:])]
        merged, perm = merged_transpose(view, [0, 2, 1, 3])
        steps += [Step("reshape", tuple(merged)), Step("transpose", permutation=tuple(perm))]
        current.insert(i, current.pop(j))
        sizes.insert(i, sizes.pop(j))
    return steps


def plan_chain(transposes: Sequence[tuple[Sequence[int], Sequence[int]]],
               out_shape: Sequence[int], max_rank: int) -> tuple[list[Step], bool]:
    """(the steps, whether any transpose needed axis moves) that take the row-major element
    sequence of a chain's start through `transposes` ((input shape, permutation) each, in
    order) to `out_shape`: each transpose on its merged axes when their count is at most
    `max_rank`, else as `axis_moves`; consecutive reshapes merged, the last to `out_shape`."""
    raw: list[Step] = []
    moved = False
    for shape, permutation in transposes:
        merged, perm = merged_transpose(shape, permutation)
        if perm == list(range(len(perm))):
            continue  # moves no element
        if len(merged) <= max_rank:
            raw += [Step("reshape", tuple(merged)), Step("transpose", permutation=tuple(perm))]
        else:
            raw += axis_moves(merged, perm)
            moved = True
    raw.append(Step("reshape", tuple(int(d) for d in out_shape)))
    steps: list[Step] = []
    for step in raw:
        if step.op == "reshape" and steps and steps[-1].op == "reshape":
            steps.pop()
        steps.append(step)
    return steps, moved


def _chain(rw: Rewrite, y: MLOperand, dt: str
           ) -> tuple[MLOperand, list[tuple[list[int], list[int]]]] | None:
    """(the nearest operand before `y` whose rank fits, the transposes between, in order)
    when only reshapes and transposes lie between; None otherwise."""
    transposes: list[tuple[list[int], list[int]]] = []
    x = y
    while not _fits_rank(rw, "reshape", "input", dt, x.rank):
        operation = x.operator
        if operation is None or operation.op not in ("reshape", "transpose"):
            return None
        x = operation.args[0]
        if operation.op == "transpose":
            transposes.append((list(x.shape), list(operation.options["permutation"])))
    return x, transposes[::-1]


def _plan_fits(rw: Rewrite, dt: str, rank: int, steps: Sequence[Step]) -> bool:
    """Whether every step, starting from an operand of `rank`, fits the target's limits."""
    for step in steps:
        if step.op == "reshape":
            if not _reshape_fits(rw, dt, rank, len(step.shape)):
                return False
            rank = len(step.shape)
        elif not _transpose_fits(rw, dt, rank):
            return False
    return True


def _without_identities(shape: Sequence[int], steps: Sequence[Step]) -> list[Step]:
    """`steps` from an operand of `shape` less the reshapes to the shape already there
    (the last step is kept when it is the only one: the rule returns a new operand)."""
    kept: list[Step] = []
    current = [int(d) for d in shape]
    for k, step in enumerate(steps):
        if step.op == "reshape":
            if list(step.shape) == current and (kept or k < len(steps) - 1):
                continue
            current = list(step.shape)
        else:
            current = [current[a] for a in step.permutation]
        kept.append(step)
    return kept


def _max_rank(rw: Rewrite, dt: str, start: int) -> int:
    """The highest rank (at most `start`) a transpose of `dt` fits at; 0 if none."""
    return next((r for r in range(start, 0, -1) if _transpose_fits(rw, dt, r)), 0)


@rule(NAME, "reshape", limits=True,
      why="a reshape/transpose chain passes through a rank above the target's rankRange")
def reshape_chains(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """The last reshape of a chain whose middle is above the target's rank limits, rewritten
    so that every operand fits (see the module docstring)."""
    if not rw.limits:
        return None
    y = operation.args[0]
    out = operation.outputs[0]
    dt = y.data_type
    if _reshape_fits(rw, dt, y.rank, out.rank):
        return None  # nothing too high here
    if not _fits_rank(rw, "reshape", "output", dt, out.rank):
        return None  # the result itself does not fit: no chain rewrite helps
    found = _chain(rw, y, dt)
    if found is None:
        return None
    x, transposes = found
    if not transposes:
        if not _reshape_fits(rw, dt, x.rank, out.rank):
            return None
        rw.note(NAME, "consecutive reshapes as one")
        return [rw.emit1("reshape", x, list(out.shape))]
    high = max(len(shape) for shape, _ in transposes)
    steps, moved = plan_chain(transposes, out.shape, _max_rank(rw, dt, high))
    steps = _without_identities(x.shape, steps)
    if not _plan_fits(rw, dt, x.rank, steps):
        return None
    z = x
    for step in steps:
        z = rw.emit1("reshape", z, list(step.shape)) if step.op == "reshape" else \
            rw.emit1("transpose", z, permutation=list(step.permutation))
    if len(transposes) == 1 and not moved:
        merged = len(merged_transpose(*transposes[0])[0])
        rw.note(NAME, f"reshape-transpose-reshape through rank {high} on {merged} merged axes")
    else:
        how = "single-axis moves" if moved else "merged axes"
        rw.note(NAME, f"{len(transposes)} transposes through rank {high} as "
                      f"{sum(s.op == 'transpose' for s in steps)} on {how}")
    return [z]


__all__ = ["NAME", "Step", "axis_moves", "merged_transpose", "plan_chain", "reshape_chains"]
