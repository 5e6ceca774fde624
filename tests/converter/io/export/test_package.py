"""`converter.export(...)` and `converter.load(...)` at the package top level."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import converter
import converter.io.export.javascript  # noqa: F401  (binds the package to converter.io.export)
from converter.core.webnn import ML, MLGraphBuilder


def test_export_is_callable_after_submodule_imports(tmp_path: Path) -> None:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    x = b.input("x", [3], "float32")
    graph = b.build({"y": b.relu(x)})
    files = converter.export(graph, tmp_path / "out", format="webnn")
    assert {f.suffix for f in files} == {".webnn", ".weights", ".json"}
    loaded = converter.load(tmp_path / "out" / "model.webnn")
    v = np.array([-1.0, 0.5, 2.0], np.float32)
    assert loaded.context.compute(loaded, {"x": v})["y"].tolist() == [0.0, 0.5, 2.0]
