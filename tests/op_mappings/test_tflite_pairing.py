"""Every TFLite mapping module has its test module, and every handler documents itself."""

from __future__ import annotations

from pathlib import Path

import op_mappings.tflite as registry

ROOT = Path(__file__).resolve().parents[2]
HELPERS = {"tflite_builder"}
CROSS_CUTTING = {"test_malformed"}
"""Test modules about every handler at once (malformed operators), paired with no module."""


def _modules() -> list[str]:
    return sorted(p.stem for p in (ROOT / "op_mappings" / "tflite").glob("*.py")
                  if not p.stem.startswith("_"))


def test_every_mapping_module_has_a_test() -> None:
    tests = ROOT / "tests" / "op_mappings" / "tflite"
    missing = [m for m in _modules() if not (tests / f"test_{m}.py").is_file()]
    assert not missing, f"mapping modules without tests/op_mappings/tflite/test_<name>.py: {missing}"


def test_every_test_module_has_a_mapping() -> None:
    tests = ROOT / "tests" / "op_mappings" / "tflite"
    orphans = [p.stem for p in tests.glob("test_*.py")
               if p.stem[5:] not in _modules() and p.stem not in CROSS_CUTTING]
    assert not orphans, f"tests without a mapping module: {orphans}"


def test_handlers_documented_and_lookup_rule() -> None:
    handlers = registry.handlers()
    assert len(registry.builtins()) >= 100
    for h in handlers:
        assert h.doc, f"{h.op_type} handler has no docstring"
    assert registry.lookup("CONV_2D", "", 1) is registry.lookup("CONV_2D", "", 7)
    assert registry.lookup("CONV_2D", "", 0) is None
    assert registry.lookup("Convolution2DTransposeBias", "custom", 1) is not None
    assert registry.lookup("Convolution2DTransposeBias", "", 1) is None
    rows = {r["op_type"]: r for r in registry.support_table()}
    assert rows["TRANSPOSE_CONV"]["const_inputs"] == [0]
