"""What the real-browser check (`converter.validate.browser.run_graphs`) exports and feeds:
a ConversionResult with host steps goes whole (graph + host steps, `<stem>.host.json`, the
module's `computeTensors`), with the model inputs only the host steps read; anything else
as its graph, as before. No browser here (tests/browser/test_host_steps_validate.py runs it)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from converter import convert
from converter.io.export.exporter import export
from converter.validate.browser import exported_item, input_values
from tests.converter.conversion.host_models import make_detection
from tests.converter.io.serialize.test_source_types import IDS, _model


def test_a_result_with_host_steps_is_exported_whole(tmp_path: Path) -> None:
    model, inputs = make_detection()
    result = convert(model)
    exported, graph = exported_item(result)
    assert exported is result and graph is result.graph
    assert "boxes" not in graph.inputs  # read by the host steps only
    feeds = input_values(exported, {**inputs, "unused": np.zeros(1)})
    assert set(feeds) == {"logits", "boxes"}
    assert all(v.dtype == np.float32 for v in feeds.values())
    written = {p.name for p in export(exported, tmp_path / "g0", format="js", stem="model")}
    assert "model.host.json" in written
    module = (tmp_path / "g0" / "model.js").read_text(encoding="utf-8")
    assert "computeTensors" in module and "hostOnly: true" in module


def test_anything_else_runs_as_its_graph(tmp_path: Path) -> None:
    result = convert(str(_model(tmp_path)))
    assert result.host is None and result.graph.narrowed_inputs == {"ids": "int64"}
    for item in (result, result.graph):
        exported, graph = exported_item(item)
        assert exported is result.graph and graph is result.graph
    feeds = input_values(result.graph, {"ids": IDS, "other": IDS})
    assert list(feeds) == ["ids"] and feeds["ids"].dtype == np.int64  # compute() narrows it
