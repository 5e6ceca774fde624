"""Every ONNX mapping module has its test module, and every handler documents itself."""

from __future__ import annotations

from pathlib import Path

import op_mappings.onnx as registry

ROOT = Path(__file__).resolve().parents[2]

CROSS_CUTTING = {"test_malformed"}
"""Test modules about every handler at once (malformed nodes), paired with no module."""


def _modules() -> list[str]:
    return sorted(p.stem for p in (ROOT / "op_mappings" / "onnx").glob("*.py")
                  if not p.stem.startswith("_"))


def test_every_mapping_module_has_a_test() -> None:
    tests = ROOT / "tests" / "op_mappings" / "onnx"
    missing = [m for m in _modules() if not (tests / f"test_{m}.py").is_file()]
    assert not missing, f"mapping modules without tests/op_mappings/onnx/test_<name>.py: {missing}"


def test_every_test_module_has_a_mapping() -> None:
    """tests/op_mappings/onnx/test_<module>.py, or test_<module>_<topic>.py for a second
    test file of one module."""
    tests = ROOT / "tests" / "op_mappings" / "onnx"
    modules = _modules()
    orphans = [p.stem for p in tests.glob("test_*.py")
               if not any(p.stem[5:] == m or p.stem[5:].startswith(f"{m}_") for m in modules)
               and p.stem not in CROSS_CUTTING]
    assert not orphans, f"tests without a mapping module: {orphans}"


def test_handlers_documented_and_lookup_rule() -> None:
    handlers = registry.handlers()
    assert handlers
    for h in handlers:
        assert h.doc, f"{h.op_type} handler has no docstring"
    # highest since <= version, never an exact match
    assert registry.lookup("Clip", "", 10).since == 6
    assert registry.lookup("Clip", "", 11).since == 11
    assert registry.lookup("Clip", "", 21).since == 11
    assert registry.lookup("Clip", "", 5) is None
    assert registry.lookup("Relu", "ai.onnx", 14) is registry.lookup("Relu", "", 14)
    rows = {r["op_type"]: r for r in registry.support_table()}
    assert rows["Clip"]["since"] == [6, 11]
    assert rows["Reshape"]["const_inputs"] == [1]
