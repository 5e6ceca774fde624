"""`ConversionResult.with_graph`: a new result with the new graph and the notes in its report;
the original result (graph, report, compiled executables) is left as it was."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from converter.results.result import ConversionResult
from tests.converter.results import models
from tests.converter.results.models import X, times_two


@pytest.fixture
def plus_one(tmp_path: Path) -> ConversionResult:
    return models.plus_one(tmp_path)


def test_with_graph_is_a_new_result_and_leaves_the_original(plus_one: ConversionResult
                                                           ) -> None:
    before = list(plus_one.report.warnings)
    nodes = list(plus_one.report.nodes)
    graph = plus_one.graph
    doubled = plus_one.with_graph(times_two(plus_one), notes=["a note", "another"])
    assert doubled is not plus_one and doubled.graph is not graph
    assert doubled.report.warnings == [*before, "a note", "another"]
    assert doubled.report.nodes == nodes and doubled.report.nodes is not plus_one.report.nodes
    assert (doubled.inputs, doubled.outputs, doubled.source) == (
        plus_one.inputs, plus_one.outputs, plus_one.source)
    assert plus_one.graph is graph and plus_one.report.warnings == before
    assert plus_one.report.nodes == nodes
    np.testing.assert_array_equal(plus_one.run({"x": X})["y"], X + 1)
    np.testing.assert_array_equal(doubled.run({"x": X})["y"], X * 2)


def test_with_graph_compiles_the_new_graph_afresh(plus_one: ConversionResult) -> None:
    """A backend that compiles (onnxruntime) runs the new graph, not the executable the
    original result compiled and cached."""
    np.testing.assert_array_equal(plus_one.run({"x": X}, backend="onnxruntime")["y"], X + 1)
    doubled = plus_one.with_graph(times_two(plus_one))
    np.testing.assert_array_equal(doubled.run({"x": X}, backend="onnxruntime")["y"], X * 2)
    np.testing.assert_array_equal(plus_one.run({"x": X}, backend="onnxruntime")["y"], X + 1)


def test_with_graph_of_the_same_graph_only_adds_notes(plus_one: ConversionResult) -> None:
    noted = plus_one.with_graph(plus_one.graph, notes=("checked",))
    assert noted.graph is plus_one.graph
    assert noted.report.warnings[-1] == "checked" and "checked" not in plus_one.report.warnings
    np.testing.assert_array_equal(noted.run({"x": X}, backend="onnxruntime")["y"], X + 1)

