"""`converter.passes.framework`: passes run in the order given, each on the previous one's
graph, their notes collected in that order; a result goes through them into a new result
(`ConversionResult.with_graph`). The pass lists: target rules in the declared `ORDER` (not the
order their modules register them in), per-precision lists."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraph, MLGraphBuilder
from converter.passes.framework import Pass, PassResult, apply_passes, run_passes
from converter.passes.precision import PRECISION_PASSES, PRECISIONS
from converter.passes.targets import Target, apply_target, load_target
from converter.passes.targets.passes import LIMITS_RULES, ORDER, RULES, rules_for, target_passes
from converter.passes.targets.rewrite import REGISTERED
from converter.results.result import ConversionResult
from tests.converter.results import models
from tests.converter.results.models import X


@pytest.fixture
def plus_one(tmp_path: Path) -> ConversionResult:
    return models.plus_one(tmp_path)


def _graph() -> MLGraph:
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", [2, 3], "float32")
    return b.build({"y": b.relu(x)})


def _appending(name: str, log: list[tuple[str, MLGraph]]) -> Pass:
    """A pass that logs the graph it got and gives a new graph (one more operation)."""

    def run(graph: MLGraph) -> PassResult:
        log.append((name, graph))
        b = MLGraphBuilder(graph.context)
        x = b.input("x", [2, 3], "float32")
        y = x
        for _operation in graph.operations:
            y = b.relu(y)
        return PassResult(b.build({"y": b.relu(y)}), (f"{name} ran",))

    return Pass(name, run)


def test_passes_run_in_the_declared_order_on_the_previous_graph() -> None:
    log: list[tuple[str, MLGraph]] = []
    graph = _graph()
    ran = run_passes(graph, (_appending("b", log), _appending("a", log),
                             _appending("c", log)))
    assert [name for name, _ in log] == ["b", "a", "c"]
    assert log[0][1] is graph and log[1][1] is not graph
    assert ran.notes == ("b ran", "a ran", "c ran")
    assert len(ran.graph.operations) == 4 and len(graph.operations) == 1


def test_no_passes_and_silent_passes_give_the_graph_itself() -> None:
    graph = _graph()
    assert run_passes(graph, ()) == PassResult(graph, ())
    same = Pass("same", lambda g: PassResult(g))
    assert run_passes(graph, (same, same)).graph is graph


def test_apply_passes_keeps_the_original_result(plus_one: ConversionResult) -> None:
    log: list[tuple[str, MLGraph]] = []
    warnings = list(plus_one.report.warnings)
    graph = plus_one.graph
    noting = Pass("note", lambda g: PassResult(g, ("looked",)))
    got = apply_passes(plus_one, (noting, _appending("relu", log)))
    assert got is not plus_one and got.report.warnings == [*warnings, "looked", "relu ran"]
    assert plus_one.graph is graph and plus_one.report.warnings == warnings
    np.testing.assert_array_equal(got.run({"x": X})["y"], np.maximum(X, 0))
    np.testing.assert_array_equal(plus_one.run({"x": X})["y"], X + 1)
    assert apply_passes(plus_one, (Pass("same", lambda g: PassResult(g)),)) is plus_one


def test_every_rule_is_placed_in_the_order_once() -> None:
    assert sorted(ORDER) == sorted(REGISTERED) and len(set(ORDER)) == len(ORDER)
    assert tuple(RULES) == ORDER
    assert LIMITS_RULES == tuple(name for name in ORDER if REGISTERED[name].limits)
    # layout first (the other rules see nhwc operations), narrow-int64 last
    assert ORDER[0] == "layout-nhwc" and ORDER[-1] == "narrow-int64"


def test_a_targets_rules_are_tried_in_the_declared_order_whatever_it_lists() -> None:
    shipped = load_target("chromium-tflite")
    backwards = Target("backwards", "", shipped.limits, tuple(reversed(shipped.rules)))
    want = tuple(name for name in ORDER if name in shipped.rules)
    assert tuple(r.name for r in rules_for(shipped)) == want
    assert tuple(r.name for r in rules_for(backwards)) == want
    assert tuple(r.name for r in rules_for(shipped, only=["slice-strides", "layout-push",
                                                          "not-its-rule"])) == (
        "layout-push", "slice-strides")


def test_a_target_runs_its_rules_then_its_limits_check() -> None:
    target = load_target("chromium-coreml")
    assert [p.name for p in target_passes(target)] == ["chromium-coreml rules",
                                                        "chromium-coreml limits"]


def test_target_and_precision_passes_leave_the_original(plus_one: ConversionResult
                                                             ) -> None:
    graph, warnings = plus_one.graph, list(plus_one.report.warnings)
    half = apply_passes(plus_one, PRECISION_PASSES["float16"])
    assert half.graph is not graph and any(w.startswith("float16: ") for w in
                                           half.report.warnings)
    assert apply_passes(plus_one, PRECISION_PASSES["float32"]) is plus_one
    assert apply_target(plus_one, "chromium-tflite") is plus_one  # nothing to rewrite
    assert plus_one.graph is graph and plus_one.report.warnings == warnings


def test_each_precision_has_its_pass_list() -> None:
    assert tuple(PRECISION_PASSES) == PRECISIONS
    assert PRECISION_PASSES["float32"] == ()
    assert [p.name for p in PRECISION_PASSES["float16"]] == ["float16"]


def test_a_rule_names_only_webnn_operators() -> None:
    from converter.passes.targets.rewrite import REGISTERED, rule

    with pytest.raises(ValueError, match="unknown WebNN operator 'conv2D'"):
        rule("misspelt-operator", "conv2D", why="test")(lambda rw, operation: None)
    assert "misspelt-operator" not in REGISTERED
