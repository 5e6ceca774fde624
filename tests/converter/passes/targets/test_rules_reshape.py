"""Rule reshape-chains (converter.passes.targets.rules_reshape): reshape/transpose chains through a
rank above a hand-written limits file's rankRange (every operator capped at rank 5, as
Core ML is) are rewritten on merged axes, or by single-axis moves when the merged rank is
still too high; the lowered graph fits the limits (check_graph), matches numpy float64 (the
spec's reshape is numpy's row-major reshape) and, on the reference runtime, the original
graph bit for bit."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraphBuilder, MLOperand
from converter.passes.targets import load_target
from converter.passes.targets.check import check_graph
from converter.passes.targets.passes import lower
from converter.passes.targets.rules_reshape import Step, axis_moves, merged_transpose, plan_chain

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


# -- chains with several transposes, and transposes above the limit even once merged ------

def _maxvit_partition(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
    """maxvit_t's window partition (torchvision, dynamo export), as converted."""
    y = b.transpose(b.reshape(x, [1, 64, 8, 7, 8, 7]), permutation=[0, 2, 4, 3, 5, 1])
    return b.reshape(y, [1, 64, 49, 64])


def _maxvit_window_to_grid(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
    """maxvit_t's window-to-grid step: two rank-6 transposes around a rank-6 reshape."""
    y = b.transpose(b.reshape(x, [1, 8, 8, 7, 7, 64]), permutation=[0, 5, 1, 3, 2, 4])
    y = b.transpose(b.reshape(y, [1, 64, 7, 8, 7, 8]), permutation=[0, 2, 4, 3, 5, 1])
    return b.reshape(y, [1, 49, 64, 64])


def _rank7_scatter(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
    """A rank-7 transpose none of whose axes stay together (merged rank still 7)."""
    y = b.transpose(b.reshape(x, [2, 3, 4, 5, 6, 7, 8]), permutation=[6, 4, 2, 0, 5, 3, 1])
    return b.reshape(y, [8, 5040])


# (name, graph, input shape, rank cap, transposes after, operations after)
MULTI = [
    ("maxvit partition", _maxvit_partition, [1, 64, 56, 56], 5, 1, 3),
    ("maxvit window-to-grid", _maxvit_window_to_grid, [1, 64, 49, 64], 5, 2, 5),
    ("maxvit partition, rank 4", _maxvit_partition, [1, 64, 56, 56], 4, 4, 9),
    ("maxvit window-to-grid, rank 4", _maxvit_window_to_grid, [1, 64, 49, 64], 4, 6, 13),
    ("rank 7 by axis moves", _rank7_scatter, [6, 20, 336], 5, 5, 11),
]


@pytest.mark.parametrize("case", MULTI, ids=[c[0] for c in MULTI])
def test_multi_transpose_chain_equals_the_original(case: tuple[Any, ...],
                                                   tmp_path: Path) -> None:
    """The lowered chain fits the cap and computes, on the reference runtime, exactly the
    original (rank 6/7) graph's values on random data; the counts of the plan."""
    _, make, shape, cap, transposes, count = case
    path = tmp_path / f"rank{cap}.json"
    path.write_text(json.dumps(_limits(cap)))
    target = load_target(path)
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=shape, data_type="float32")
    graph = b.build({"y": make(b, x)})
    assert check_graph(graph, target)
    lowered = lower(graph, target)
    assert [v.line() for v in check_graph(lowered.graph, target)] == []
    assert lowered.applied.get("reshape-chains") == 1, lowered.notes
    ops = [op.op for op in lowered.graph.operations]
    assert (ops.count("transpose"), len(ops)) == (transposes, count), ops
    assert max(o.rank for op in lowered.graph.operations for o in op.outputs) <= cap
    feed = {"x": RNG.normal(size=shape).astype(np.float32)}
    want = np.asarray(graph.context.compute(graph, feed)["y"])
    got = np.asarray(graph.context.compute(lowered.graph, feed)["y"])
    assert got.dtype == want.dtype == np.float32
    assert got.tobytes() == want.tobytes()


def test_plan_left_alone_when_a_step_does_not_fit(tmp_path: Path) -> None:
    """With reshape and transpose capped at rank 3 the second axis move's view
    ([8, 448, 8, 7], rank 4) does not fit either: nothing is emitted, and check_graph still
    names the rank the chain lacks."""
    limits = _limits(MAX_RANK)
    for op in ("reshape", "transpose"):
        for role in limits[op].values():
            role["rankRange"]["max"] = 3
    path = tmp_path / "rank3.json"
    path.write_text(json.dumps(limits))
    target = load_target(path)
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[64, 3136], data_type="float32")
    y = b.transpose(b.reshape(x, [64, 8, 7, 8, 7]), permutation=[1, 3, 2, 4, 0])
    lowered = lower(b.build({"y": b.reshape(y, [3136, 64])}), target)
    assert "reshape-chains" not in lowered.applied
    assert any(v.kind == "rank" for v in check_graph(lowered.graph, target))


@pytest.mark.parametrize("seed", range(12))
def test_axis_moves_and_plan_move_the_elements_as_the_transposes(seed: int) -> None:
    """Random shapes and permutations of rank 2..7: the steps of `axis_moves` (each a
    transpose of rank <= 4, at most rank - 1 of them) and of `plan_chain` applied with numpy
    give the transposes' row-major sequence."""
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(2, 8))
    shape = [int(d) for d in rng.integers(1, 4, size=rank)]
    perm = [int(a) for a in rng.permutation(rank)]
    v = np.arange(math.prod(shape)).reshape(shape)
    moves = axis_moves(shape, perm)
    assert sum(s.op == "transpose" for s in moves) <= rank - 1
    assert all(len(s.permutation) <= 4 for s in moves)
    assert np.array_equal(_apply(v, moves).reshape(-1), v.transpose(perm).reshape(-1))
    out = [math.prod(shape)]
    steps, _ = plan_chain([(shape, perm), (shape[::-1], perm[::-1])], out, 4)
    assert all(len(s.shape) <= 4 for s in steps if s.op == "reshape")
    want = v.transpose(perm).reshape(shape[::-1]).transpose(perm[::-1]).reshape(out)
    assert np.array_equal(_apply(v, steps), want)


def _apply(v: np.ndarray, steps: list[Step]) -> np.ndarray:
    for s in steps:
        v = v.reshape(s.shape) if s.op == "reshape" else v.transpose(s.permutation)
    return v
