"""The checks every stored sweep file (validate/sweep.py's JSON: the conformance sweep, the
quantized one) passes against its target's known_failures.json."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from converter.passes.targets import load_target
from converter.passes.targets.passes import RULES
from converter.validate.sweep import check_sweep, counts


def check_stored_sweep(doc: Mapping[str, Any], target: str = "chromium-tflite") -> None:
    """Asserts that `doc` was swept for `target`, that its counts are its cases', that every
    failure in it is a known failure of `target` and every known failure of its sweep still
    fails there, and that its lowered cases name registered rules only."""
    assert doc["target"] == target
    assert doc["counts"] == counts(doc["cases"])
    new, stale = check_sweep(doc, load_target(target).known_failures())
    assert not new, "\n".join(new)
    assert not stale, "\n".join(stale)
    for case in doc["cases"]:
        if case.get("lowered"):
            assert set(case["lowered"]["rules"]) <= set(RULES), case
