"""op_mappings.registry: registration, the highest-`since` lookup rule, duplicates, domain
normalisation, discovery of a package's modules, the support table; and that the ONNX and
TFLite packages are thin instances of it with their public names."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

import op_mappings.onnx as onnx_registry
import op_mappings.tflite as tflite_registry
from op_mappings.registry import Handler, Registry


def _fresh(tmp_path: Path, name: str = "fake_ops") -> Registry:
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    return Registry("Fake", name, [str(package)], lambda d: "" if d == "alias" else d)


def test_register_and_lookup_highest_since(tmp_path: Path) -> None:
    reg = _fresh(tmp_path)
    reg.loaded = True  # nothing to discover

    @reg.register(["A", "B"], 1, "")
    def v1(ctx: object, node: object) -> list[object]:
        """Version one."""
        return []

    @reg.register("A", 13, "alias", const_inputs=(1,), fold=False)
    def v13(ctx: object, node: object) -> list[object]:
        return []

    assert reg.lookup("A", "", 0) is None
    assert reg.lookup("A", "", 12) == Handler("A", "", 1, v1, (), None, __name__)
    got = reg.lookup("A", "alias", 20)
    assert got is not None and (got.since, got.fn, got.const_inputs, got.fold) == (
        13, v13, (1,), False)
    assert reg.lookup("B", "", 99).fn is v1  # type: ignore[union-attr]
    assert reg.lookup("C", "", 99) is None
    assert [(h.op_type, h.since) for h in reg.handlers()] == [("A", 1), ("A", 13), ("B", 1)]
    assert reg.builtins() == ["A", "B"]
    assert reg.support_table() == [
        {"op_type": "A", "domain": "", "since": [1, 13], "const_inputs": [1],
         "notes": "Version one."},
        {"op_type": "B", "domain": "", "since": [1], "const_inputs": [],
         "notes": "Version one."}]
    with pytest.raises(ValueError, match="Fake handler for A since 13 registered twice"):
        reg.register("A", 13, "")(v1)


def test_load_all_imports_public_modules_once(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    reg = _fresh(tmp_path, "fake_ops_discovery")
    package = tmp_path / "fake_ops_discovery"
    module = types.ModuleType("fake_registry_holder")
    module.reg = reg  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_registry_holder", module)
    monkeypatch.syspath_prepend(str(tmp_path))
    (package / "relu.py").write_text(
        '"""Relu restrictions: none."""\nfrom fake_registry_holder import reg\n\n'
        '@reg.register("Relu", 6, "ai.onnx")\ndef relu(ctx, node):\n    return []\n')
    (package / "_private.py").write_text("raise RuntimeError('must not be imported')\n")
    assert reg.lookup("Relu", "ai.onnx", 14) is not None  # discovered on first lookup
    h = reg.lookup("Relu", "ai.onnx", 14)
    assert h is not None and h.doc == "Relu restrictions: none."  # the module's docstring
    reg.load_all()  # idempotent: no "registered twice"
    assert len(reg.handlers()) == 1


def test_packages_are_registry_instances() -> None:
    for package, decorator in ((onnx_registry, "onnx_op"), (tflite_registry, "tflite_op")):
        assert isinstance(package._registry, Registry)
        for name in ("lookup", "handlers", "support_table", "builtins", "load_all",
                     "Handler", "FoldFn", "HandlerFn", decorator):
            assert hasattr(package, name), (package.__name__, name)
        assert package.Handler is Handler
        assert package._REGISTRY is package._registry.table
    assert onnx_registry.lookup("Relu", "ai.onnx", 14) is onnx_registry.lookup("Relu", "", 14)
    assert "CONV_2D" in tflite_registry.builtins()
    conv = tflite_registry.lookup("CONV_2D", "", 1)
    assert conv is not None and conv.domain == ""
    assert {row["domain"] for row in tflite_registry.support_table()} >= {"", "custom"}
