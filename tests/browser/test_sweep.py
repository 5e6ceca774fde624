"""The sweep (slow): every WebNN conformance case of converter/validate/wpt, plus the
float64-formula pool cases, runs in the real browser as converted and, where the chromium-tflite
rules (or the default target's, portable) rewrite it, rewritten. It fails when a case fails without a rule that fixes it or an entry in
converter/passes/targets/chromium-tflite/known_failures.json (a new deviation), when a rule breaks a
case on the reference runtime, or when a known-failure entry no longer matches anything."""

from __future__ import annotations

from typing import Any

import pytest

from converter.passes.targets import load_target
from converter.validate.sweep import check_sweep, sweep

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.mark.parametrize("name", ["chromium-tflite", "portable"])
def test_no_new_deviation_in_the_browser(browser: Any, name: str) -> None:
    """Under chromium-tflite and under the default target, portable (its known failures:
    converter/passes/targets/portable/known_failures.json)."""
    target = load_target(name)
    doc = sweep(target=target, setup=browser)
    new, stale = check_sweep(doc, target.known_failures())
    assert not new, (f"{len(new)} case(s) fail in {doc['browser']} without a rule or a known "
                     "failure (add a rule to converter/passes/targets/passes.py or an entry with its "
                     "reason to known_failures.json):\n" + "\n".join(new))
    assert not stale, "known failures that match no failing case:\n" + "\n".join(stale)
    assert doc["counts"]["with_rules"].get("pass", 0) >= doc["counts"]["raw"].get("pass", 0)


def test_sweep_cli_on_a_few_cases(browser: Any, tmp_path: Any) -> None:
    import json

    from click.testing import CliRunner

    from cli.main import cli

    out = tmp_path / "sweep"
    r = CliRunner().invoke(cli, ["targets", "--sweep", str(out), "--filter", "slice:9",
                                 "--filter", "averagePool2d:5", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["counts"]["cases"] == 2 and data["new_deviations"] == []
    assert data["counts"]["raw"] == {"rejected": 1, "wrong": 1}
    assert data["counts"]["with_rules"] == {"pass": 2}
    doc = json.loads((out / "sweep.json").read_text())
    assert {c["id"] for c in doc["cases"]} == {"slice:9", "averagePool2d:5"}
    assert json.loads((out / "limits.json").read_text())["pad"]["input"]["dataTypes"]
