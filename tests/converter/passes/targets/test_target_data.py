"""The shipped chromium-tflite data (converter/passes/targets/chromium-tflite): the target loads (its
rules exist, its browser version comes from sweep.json), the stored sweep covers every
conformance case the sweep would run now and, with the rules and the known failures, holds no
unexplained failure; the deviation table of docs/targets.md names every rule. No browser needed:
`webnn-convert targets --sweep converter/passes/targets/chromium-tflite` regenerates the data."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from converter.core.errors import InvalidModel
from converter.passes.targets import TARGETS_DIR, known_targets, load_target
from converter.passes.targets.passes import LIMITS_RULES, RULES
from converter.validate.sweep import all_cases
from tests.converter.validate.stored_sweep import check_stored_sweep

ROOT = Path(__file__).resolve().parents[4]
FOLDER = TARGETS_DIR / "chromium-tflite"


def _sweep() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FOLDER / "sweep.json").read_text(encoding="utf-8"))
    return data


def test_chromium_tflite_target_loads() -> None:
    assert "chromium-tflite" in known_targets()
    t = load_target("chromium-tflite")
    assert t.browser == _sweep()["browser"] and t.browser.startswith("HeadlessChrome/")
    assert set(t.rules) <= set(RULES) and "pool-padding" in t.rules
    assert "int8" not in t.limits["pad"]["input"]["dataTypes"]
    assert t.limits_dict() == json.loads((FOLDER / "limits.json").read_text())
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        t.limits["pad"] = {}  # type: ignore[index]
    assert load_target(t) is t


def test_unknown_or_broken_targets_are_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidModel, match="unknown target 'firefox'.*chromium-tflite"):
        load_target("firefox")
    bad = tmp_path / "limits.json"
    bad.write_text("{not json")
    with pytest.raises(InvalidModel, match="not JSON"):
        load_target(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(InvalidModel, match="JSON object"):
        load_target(bad)
    bad.write_text("[" * 100_000 + "]" * 100_000)  # fuzz seed 30: RecursionError before
    with pytest.raises(InvalidModel, match="nest too deeply"):
        load_target(bad)
    with pytest.raises(InvalidModel, match=r"target '.*missing\.json': no such file; give one "
                                           r"of chromium-coreml"):
        load_target(tmp_path / "missing.json")


@pytest.mark.parametrize(("limits", "message"), [
    ({"add": 3}, r"'add' is 3, an object of operand roles expected"),
    ({"add": {"a": {"dataTypes": "float32"}}}, r"'add'\.a\.dataTypes must be a list"),
    ({"add": {"a": 1}}, r"'add'\.a is 1, an object"),
    ({"input": {"rankRange": {"min": 0, "max": -1}}}, r"'input'\.rankRange must be"),
    ({"output": []}, r"'output' is \[\], an object"),
    ({"maxTensorByteLength": True}, r"'maxTensorByteLength' must be a non-negative integer"),
    ({"preferredInputLayout": 1}, r"'preferredInputLayout' must be a string"),
    ({"add": {"a": {"rankRange": {"min": 5, "max": 1}}}},
     r"'add'\.a\.rankRange has min 5 over max 1"),
])
def test_a_limits_file_not_shaped_like_op_support_limits_is_refused(
        tmp_path: Path, limits: dict[str, object], message: str) -> None:
    # before: {"add": 3} was read as a target lacking every operator, silently
    bad = tmp_path / "limits.json"
    bad.write_text(json.dumps(limits))
    with pytest.raises(InvalidModel, match=r"target .*limits\.json: " + message):
        load_target(bad)


def test_a_limits_file_from_a_swept_browser_gets_its_deviation_rules(tmp_path: Path) -> None:
    # `targets --from-browser` in Chromium 153 writes chromium-tflite's limits.json: the same
    # browser, so its deviations (gatherelements-indices, pool-padding, ...) are lowered too
    # (they were not: a limits file had the limits-driven rules only)
    shipped = load_target("chromium-tflite")
    copy = tmp_path / "chromium_limits.json"
    copy.write_text(json.dumps(shipped.limits_dict(), indent=2, sort_keys=True))
    t = load_target(copy)
    assert t.name == "chromium_limits" and t.rules == shipped.rules
    assert t.browser == shipped.browser and "chromium-tflite" in t.description
    edited = shipped.limits_dict()
    del edited["gatherElements"]
    copy.write_text(json.dumps(edited))
    assert set(load_target(copy).rules) == set(LIMITS_RULES)


def test_every_shipped_limits_file_has_the_shape(tmp_path: Path) -> None:
    for name in known_targets():
        target = load_target(name)  # check_limits ran
        copy = tmp_path / f"{name}.json"
        copy.write_text(json.dumps(target.limits_dict()))
        assert load_target(copy).limits_dict() == target.limits_dict()


def test_stored_sweep_covers_every_case_and_explains_every_failure() -> None:
    doc = _sweep()
    stored = {c["id"] for c in doc["cases"]}
    missing = [c.id for c in all_cases() if c.id not in stored]
    assert not missing, f"cases not swept yet (run webnn-convert targets --sweep): {missing}"
    check_stored_sweep(doc, "chromium-tflite")


def test_known_failures_have_reasons() -> None:
    for entry in load_target("chromium-tflite").known_failures():
        assert entry.get("reason") and entry.get("op"), entry


def test_docs_table_names_every_rule() -> None:
    text = (ROOT / "docs" / "targets.md").read_text(encoding="utf-8")
    section = text[text.index("## Chromium's deviations"):]
    for name in load_target("chromium-tflite").rules:
        assert f"`{name}`" in section, name
