"""Rank limits (converter.passes.targets.rules_rank): operations above a hand-written limits file's
rankRange run on merged axes; the lowered graph fits the limits (check_graph) and matches
numpy float64."""

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

MAX_RANK = 3
RNG = np.random.default_rng(5)
A = RNG.normal(size=(2, 3, 1, 4, 5, 2)).astype(np.float32)
B = RNG.normal(size=(4, 5, 2)).astype(np.float32)


def _limits(max_rank: int) -> dict[str, Any]:
    """The reference's limits with every rank capped at `max_rank`; an operator whose
    operands need more (conv2d: rank 4) is left out, as a real target lacking it would."""
    limits = ML().create_context().op_support_limits()
    lacking = []
    for key, entry in limits.items():
        if isinstance(entry, dict) and key not in ("input", "output", "constant", "reshape"):
            for role in entry.values():
                if isinstance(role, dict) and "rankRange" in role:
                    role["rankRange"]["max"] = min(role["rankRange"]["max"], max_rank)
                    if role["rankRange"]["min"] > max_rank:
                        lacking.append(key)
    for key in lacking:
        limits.pop(key, None)
    return limits


Make = Callable[[MLGraphBuilder, MLOperand], MLOperand]
CASES: list[tuple[str, Make, Callable[[np.ndarray], np.ndarray]]] = [
    ("relu", lambda b, x: b.relu(x), lambda v: np.maximum(v, 0)),
    ("add broadcast", lambda b, x: b.add(x, b.constant(B)), lambda v: v + B),
    ("mul same shape", lambda b, x: b.mul(x, x), lambda v: v * v),
    ("where", lambda b, x: b.where(b.greater(x, b.constant(B)), x, b.constant(np.float32(7))),
     lambda v: np.where(v > B, v, 7)),
    ("transpose", lambda b, x: b.transpose(x, permutation=[4, 5, 0, 1, 2, 3]),
     lambda v: v.transpose(4, 5, 0, 1, 2, 3)),
    ("reduceSum", lambda b, x: b.reduce_sum(x, axes=[0, 1, 2], keep_dimensions=True),
     lambda v: v.sum(axis=(0, 1, 2), keepdims=True)),
    ("reduceMax", lambda b, x: b.reduce_max(x, axes=[4, 5]), lambda v: v.max(axis=(4, 5))),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_rank_merged_fits_and_matches_numpy(case: tuple[str, Make, Callable[..., Any]],
                                            tmp_path: Path) -> None:
    _, make, oracle = case
    path = tmp_path / "rank3.json"
    path.write_text(json.dumps(_limits(MAX_RANK)))
    target = load_target(path)
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=list(A.shape), data_type="float32")
    graph = b.build({"y": make(b, x)})
    assert check_graph(graph, target)
    lowered = lower(graph, target)
    assert [v.line() for v in check_graph(lowered.graph, target)] == []
    assert any("merged axes" in n for n in lowered.notes), lowered.notes
    got = np.asarray(graph.context.compute(lowered.graph, {"x": A})["y"])
    np.testing.assert_allclose(got.astype(np.float64), oracle(A.astype(np.float64)),
                               rtol=1e-5, atol=1e-5)


def test_unmergeable_is_left_alone(tmp_path: Path) -> None:
    """Alternating broadcast pattern: no merge brings rank 6 to 2."""
    path = tmp_path / "rank2.json"
    path.write_text(json.dumps(_limits(2)))
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[2, 3, 2, 3, 2, 3], data_type="float32")
    c = b.constant(np.ones((2, 1, 2, 1, 2, 1), np.float32))
    graph = b.build({"y": b.add(x, c)})
    lowered = lower(graph, load_target(path))
    assert lowered.graph is graph
