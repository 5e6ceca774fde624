"""Rule reshape-chains (limits-driven, see `converter.passes.targets.passes`): a chain of reshapes
and a transpose that passes through a rank above the target's `rankRange` while its two
ends fit, rewritten so that no operand leaves the range.

`rules_rank` merges the axes of one operation whose operands are too high in rank, but a
reshape cannot lower the rank of what it makes, and a transpose whose input comes from such
a reshape only fits once the reshape is gone. The typical case is depth-to-space (pixel
shuffle) as TFLite and ONNX exporters write it, e.g. `[1, 24, 24, 64]` reshaped to
`[1, 24, 24, 2, 2, 16]`, transposed by `[0, 1, 3, 2, 4, 5]` and reshaped to
`[1, 48, 48, 16]`: rank 6 in the middle, where Core ML stops at 5. The rule looks at the
last reshape of such a chain (when its input's rank does not fit) and walks back through
the new graph:

- `reshape(reshape(...(x)))` is `reshape(x)` (a reshape keeps the row-major order of the
  elements, so consecutive reshapes are one);
- `reshape(transpose(reshape(x), p))` is `reshape(transpose(reshape(x, m), q))`, where
  `m` merges the transpose's input axes that stay next to each other, in order, under `p`
  (and drops axes of size 1), and `q` is `p` on the merged axes: the same elements in the
  same order.

The result is kept only when every operation it emits fits the target's limits (data type
and rank of each role); the operations of the old chain are then unreachable and `build()`
leaves them out. Exact: only data movement, no arithmetic.

Restrictions: a chain with anything but reshapes and one transpose between `x` and the last
reshape (an elementwise operation, a slice) is left as it is, and so is a chain whose
intermediate operand is also used elsewhere in a way that still needs the high rank (that
use stays outside the limits and `check_graph` reports it).
"""

from __future__ import annotations

from collections.abc import Sequence

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


def _producer(x: MLOperand, op: str) -> Operation | None:
    operation = x.operator
    return operation if operation is not None and operation.op == op else None


def _through_reshapes(x: MLOperand) -> MLOperand:
    """The operand before the run of reshapes that ends in `x` (`x` itself if none)."""
    while (producer := _producer(x, "reshape")) is not None:
        x = producer.args[0]
    return x


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
    source = _through_reshapes(y)
    if source is not y and _reshape_fits(rw, dt, source.rank, out.rank):
        rw.note(NAME, "consecutive reshapes as one")
        return [rw.emit1("reshape", source, list(out.shape))]
    transpose = _producer(y, "transpose")
    if transpose is None:
        return None
    t_in = transpose.args[0]
    x = _through_reshapes(t_in)
    if x is t_in:
        return None  # the transpose's input is not a reshape: nothing to merge away
    merged, perm = merged_transpose(t_in.shape, transpose.options["permutation"])
    rank = len(merged)
    if not (_reshape_fits(rw, dt, x.rank, rank) and _transpose_fits(rw, dt, rank)
            and _reshape_fits(rw, dt, rank, out.rank)):
        return None
    z = x if list(x.shape) == merged else rw.emit1("reshape", x, merged)
    if perm != list(range(rank)):
        z = rw.emit1("transpose", z, permutation=perm)
    rw.note(NAME, f"reshape-transpose-reshape through rank {t_in.rank} on {rank} merged axes")
    return [rw.emit1("reshape", z, list(out.shape))]


__all__ = ["NAME", "merged_transpose", "reshape_chains"]
