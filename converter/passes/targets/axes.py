"""Merging the axes of a transpose without moving any element, for the rules that lower a
rank (`rules_rank`: rank-limits; `rules_reshape`: reshape-chains).

Input axes that stay next to each other, in order, under a permutation form a run; a tensor
whose runs are merged into one axis each (`merged_shape`), transposed by the permutation of
the runs (`transpose_runs`), holds the same elements in the same row-major order as the
original transpose. Restrictions: pure index arithmetic on permutations that are valid (each
axis once); registers no rule.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def transpose_runs(permutation: Sequence[int]) -> tuple[list[list[int]], list[int]]:
    """(runs in input order, the permutation on the runs) of a transpose by `permutation`:
    each run the input axes that stay next to each other, in order, in the output."""
    runs: list[list[int]] = []
    for axis in permutation:
        if runs and runs[-1][-1] + 1 == axis:
            runs[-1].append(axis)
        else:
            runs.append([axis])
    order = sorted(range(len(runs)), key=lambda k: runs[k][0])
    return [runs[k] for k in order], [order.index(k) for k in range(len(runs))]


def merged_shape(shape: Sequence[int], groups: Sequence[Sequence[int]]) -> list[int]:
    """`shape` with each group of axes (in order, covering every axis) as one axis."""
    return [math.prod(int(shape[a]) for a in g) for g in groups]


__all__ = ["merged_shape", "transpose_runs"]
