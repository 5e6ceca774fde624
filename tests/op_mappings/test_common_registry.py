"""Handler discovery never imports helper modules: `op_mappings/_common/` (shared by both
formats) and any module or package whose name starts with "_" stay out of the registries."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import op_mappings.onnx as onnx_registry
import op_mappings.tflite as tflite_registry
from op_mappings.registry import mapping_modules


@pytest.mark.parametrize("registry", [onnx_registry, tflite_registry], ids=["onnx", "tflite"])
def test_no_handler_comes_from_a_helper_module(registry: object) -> None:
    handlers = registry.handlers()  # type: ignore[attr-defined]
    assert handlers
    for h in handlers:
        parts = h.module.split(".")
        assert not any(p.startswith("_") for p in parts[1:]), (h.op_type, h.module)
        assert not h.module.startswith("op_mappings._common")


def test_discovery_skips_underscore_modules_and_packages(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "fakeops"
    (pkg / "_helpers").mkdir(parents=True)
    (pkg / "sub").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "op_a.py").write_text("")
    (pkg / "_private.py").write_text("raise RuntimeError('helper imported')\n")
    (pkg / "_helpers" / "__init__.py").write_text("raise RuntimeError('helper imported')\n")
    (pkg / "_helpers" / "looks_like_op.py").write_text("raise RuntimeError('imported')\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "op_b.py").write_text("")
    (pkg / "sub" / "_util.py").write_text("raise RuntimeError('helper imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        found = mapping_modules([str(pkg)], "fakeops")
    finally:
        for name in [m for m in sys.modules if m == "fakeops" or m.startswith("fakeops.")]:
            del sys.modules[name]
    assert sorted(found) == ["fakeops.op_a", "fakeops.sub", "fakeops.sub.op_b"]
