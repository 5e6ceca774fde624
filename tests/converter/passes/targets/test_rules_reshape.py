"""Rule reshape-chains (converter.passes.targets.rules_reshape): reshape/transpose chains through a
rank above a hand-written limits file's rankRange (every operator capped at rank 5, as
Core ML is) are rewritten on merged axes; the lowered graph fits the limits (check_graph)
and matches numpy float64 (the spec's reshape is numpy's row-major reshape)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraphBuilder, MLOperand
from converter.passes.targets import load_target
from converter.passes.targets.check import check_graph
from converter.passes.targets.passes import lower
from converter.passes.targets.rules_reshape import merged_transpose

MAX_RANK = 5
RNG = np.random.default_rng(11)
X = RNG.normal(size=(1, 6, 6, 16)).astype(np.float32)


def _limits(max_rank: int) -> dict[str, Any]:
    """The reference context's limits with every rankRange capped at `max_rank`."""
    limits = ML().create_context().op_support_limits()
    for entry in limits.values():
        if isinstance(entry, dict):
            roles = [entry] if "rankRange" in entry else list(entry.values())
            for role in roles:
                if isinstance(role, dict) and "rankRange" in role:
                    role["rankRange"]["max"] = min(role["rankRange"]["max"], max_rank)
    return limits


def _depth_to_space(v: np.ndarray, block: int) -> np.ndarray:
    """DepthToSpace (NHWC, DCR) as the spec's reshape/transpose define it, float64."""
    n, h, w, c = v.shape
    t = v.reshape(n, h, w, block, block, c // block ** 2).transpose(0, 1, 3, 2, 4, 5)
    return t.reshape(n, h * block, w * block, c // block ** 2)


Make = Callable[[MLGraphBuilder, MLOperand], MLOperand]
CASES: list[tuple[str, Make, Callable[[np.ndarray], np.ndarray]]] = [
    ("depth-to-space",
     lambda b, x: b.reshape(b.transpose(b.reshape(x, [1, 6, 6, 2, 2, 4]),
                                        permutation=[0, 1, 3, 2, 4, 5]), [1, 12, 12, 4]),
     lambda v: _depth_to_space(v, 2)),
    ("block swap rank 7",
     lambda b, x: b.reshape(b.transpose(b.reshape(x, [1, 3, 2, 3, 2, 4, 4]),
                                        permutation=[0, 3, 4, 1, 2, 5, 6]), [1, 9, 64]),
     lambda v: v.reshape(1, 3, 2, 3, 2, 4, 4).transpose(0, 3, 4, 1, 2, 5, 6)
     .reshape(1, 9, 64)),
    ("reshape of reshape",
     lambda b, x: b.reshape(b.reshape(x, [1, 2, 3, 2, 3, 16]), [36, 16]),
     lambda v: v.reshape(36, 16)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_chain_fits_and_matches_numpy(case: tuple[str, Make, Callable[..., Any]],
                                      tmp_path: Path) -> None:
    _, make, oracle = case
    path = tmp_path / "rank5.json"
    path.write_text(json.dumps(_limits(MAX_RANK)))
    target = load_target(path)
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=list(X.shape), data_type="float32")
    graph = b.build({"y": make(b, x)})
    assert check_graph(graph, target)  # the chain passes through rank 6 or 7
    lowered = lower(graph, target)
    assert [v.line() for v in check_graph(lowered.graph, target)] == []
    assert lowered.applied.get("reshape-chains") == 1, lowered.notes
    assert max(o.rank for op in lowered.graph.operations for o in op.outputs) <= MAX_RANK
    got = np.asarray(graph.context.compute(lowered.graph, {"x": X})["y"])
    np.testing.assert_array_equal(got.astype(np.float64), oracle(X.astype(np.float64)))


def test_unmergeable_transpose_is_left_alone(tmp_path: Path) -> None:
    """A rank-6 transpose that reverses every axis merges nothing: the chain stays, and
    check_graph still names the rank it lacks."""
    path = tmp_path / "rank5.json"
    path.write_text(json.dumps(_limits(MAX_RANK)))
    target = load_target(path)
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[2, 3, 4, 5, 6, 7], data_type="float32")
    y = b.reshape(b.transpose(b.reshape(x, [6, 4, 5, 42]), permutation=[3, 2, 1, 0]), [5040])
    graph = b.build({"y": b.reshape(b.transpose(x, permutation=[5, 4, 3, 2, 1, 0]), [5040]),
                     "z": y})
    lowered = lower(graph, target)
    assert "reshape-chains" not in lowered.applied
    assert any(v.kind == "rank" for v in check_graph(lowered.graph, target))


@pytest.mark.parametrize(("shape", "perm", "merged", "new_perm"), [
    ((1, 24, 24, 2, 2, 16), (0, 1, 3, 2, 4, 5), [24, 24, 2, 32], [0, 2, 1, 3]),
    ((2, 3, 4), (0, 1, 2), [24], [0]),
    ((2, 3, 4), (2, 0, 1), [6, 4], [1, 0]),
    ((1, 1), (1, 0), [], []),
])
def test_merged_transpose(shape: tuple[int, ...], perm: tuple[int, ...], merged: list[int],
                          new_perm: list[int]) -> None:
    assert merged_transpose(shape, perm) == (merged, new_perm)
    v = np.arange(np.prod(shape)).reshape(shape)
    expect = v.transpose(perm).reshape(-1)
    assert np.array_equal(v.reshape(merged).transpose(new_perm).reshape(-1), expect)
