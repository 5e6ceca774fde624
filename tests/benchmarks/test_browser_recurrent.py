"""Smoke tests of benchmarks/browser_recurrent.py, so that the script cannot rot: without a
browser, the graphs of the small sizes (native, and composed with no recurrent operator
left) compute the same on the reference runtime; with one (`pytest -m browser`), the
`--quick` run gives rows whose outputs match the reference. No timing is asserted."""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from tests.benchmarks.scripts import load_benchmark

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    return load_benchmark("browser_recurrent")


def test_small_sizes_compose_to_the_same_values() -> None:
    bench = _load()
    sizes = [bench.Size("lstm", 3, 8, directions=2, layers=2), bench.Size("gru", 3, 8, batch=2),
             bench.Size("lstmCell", 1, 8), bench.Size("gruCell", 1, 8)]
    for size in sizes:
        graph, feeds = bench.make_graph(size)
        composed = bench.composed(graph)
        assert size.op in {o.op for o in graph.operations}
        assert not {o.op for o in composed.operations} & set(bench.RECURRENT)
        want = graph.context.compute(graph, dict(feeds))
        got = graph.context.compute(composed, dict(feeds))
        for name, value in want.items():
            np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-6,
                                       err_msg=size.label)
    assert len({s.label for s in bench.grid()}) == len(bench.grid())


def test_floor_graph_is_the_chain_of_recurrent_gemms() -> None:
    """`--floor`: per layer and direction one weight and one gemm per step, nothing else but
    the slices that chain them; it computes on the input `make_graph` gives."""
    bench = _load()
    for size in (bench.Size("lstm", 4, 8, directions=2, layers=2), bench.Size("gru", 5, 8)):
        floor = bench.floor_graph(size)
        ops = [o.op for o in floor.operations]
        chains = size.layers * size.directions
        assert ops.count("gemm") == size.steps * chains, size.label
        assert set(ops) <= {"gemm", "slice", "reshape", "concat"}
        _, feeds = bench.make_graph(size)
        out = floor.context.compute(floor, dict(feeds))["h"]
        assert out.shape == (chains * size.batch, size.hidden) and np.isfinite(out).all()


@pytest.mark.browser
def test_quick_run_in_the_browser() -> None:
    from converter.validate.browser import BrowserUnavailable

    bench = _load()
    try:
        rows = bench.measure(bench.grid(quick=True), builds=1, rounds=2)
    except BrowserUnavailable as exc:
        if os.environ.get("WEBNN_REQUIRE_BROWSER") == "1":
            pytest.fail(f"no browser (WEBNN_REQUIRE_BROWSER=1): {exc}")
        pytest.skip(f"no browser: {exc}")
    for row in rows:
        assert "error" not in row, row
        assert row["error_native"] < 1e-5 and row["error_composed"] < 1e-5, row
        assert row["build_ratio"] > 0 and row["compute_ratio"] > 0
    assert bench.table(rows).count("\n") == len(rows) + 1
