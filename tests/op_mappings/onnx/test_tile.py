"""ONNX Tile vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check, invalid, rand


@pytest.mark.parametrize("reps", [[1, 1], [2, 3], [3, 1]])
def test_tile(reps: list[int]) -> None:
    check("Tile", {"x": rand(2, 3), "r": np.array(reps, np.int64)}, opset=13, constants=["r"])


def test_tile_repeats_must_be_integers() -> None:
    """Complex repeats were converted with a ComplexWarning on stderr (a second line)."""
    for reps, words in [(np.array([1, 2], np.complex64), "repeats must be integers, it is of "
                         "type complex64"),
                        (np.array([1.0, np.nan]), "repeats must be integers, it holds nan")]:
        assert words in invalid("Tile", {"x": rand(2, 3), "r": reps}, constants=["x", "r"])
