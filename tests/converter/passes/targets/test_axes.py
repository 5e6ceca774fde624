"""converter.passes.targets.axes: a transpose on merged runs of axes gives the same elements in the
same row-major order as the original transpose (numpy's transpose is the oracle), for every
permutation of ranks 1 to 5."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from converter.passes.targets.axes import merged_shape, transpose_runs


@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5])
def test_transposing_merged_runs_keeps_the_order(rank: int) -> None:
    shape = (2, 3, 4, 5, 6)[:rank]
    x = np.arange(int(np.prod(shape))).reshape(shape)
    for perm in itertools.permutations(range(rank)):
        groups, merged_perm = transpose_runs(perm)
        assert sorted(a for g in groups for a in g) == list(range(rank))
        got = x.reshape(merged_shape(shape, groups)).transpose(merged_perm)
        np.testing.assert_array_equal(got.reshape(-1), x.transpose(perm).reshape(-1))


def test_runs_of_a_depth_to_space_permutation() -> None:
    assert transpose_runs([0, 1, 3, 2, 4, 5]) == ([[0, 1], [2], [3], [4, 5]], [0, 2, 1, 3])
    assert transpose_runs([0, 1, 2]) == ([[0, 1, 2]], [0])
    assert merged_shape([1, 24, 24, 2, 2, 16], [[0, 1], [2], [3], [4, 5]]) == [24, 24, 2, 32]
