"""`webnn-convert targets` with no option lists the built-in targets (text and --json): each
with its Chromium version, description, operator count (the ops its limits.json lists),
preferred input layout and rules, read from converter/passes/targets/<name>/."""

from __future__ import annotations

import json

from click.testing import CliRunner

from cli.main import cli
from converter.passes.targets import TARGETS_DIR, known_targets
from converter.passes.targets.passes import LIMITS_RULES


def _ops(name: str) -> int:
    limits = json.loads((TARGETS_DIR / name / "limits.json").read_text(encoding="utf-8"))
    return sum(1 for k, v in limits.items()
               if isinstance(v, dict) and k not in ("input", "constant", "output"))


def test_targets_lists_the_builtin_profiles_as_json() -> None:
    res = CliRunner().invoke(cli, ["targets", "--json"])
    assert res.exit_code == 0, res.output
    rows = {r["name"]: r for r in json.loads(res.output)["targets"]}
    assert set(rows) == set(known_targets()) >= {"chromium-tflite", "chromium-dml",
                                                 "chromium-coreml"}
    for name, row in rows.items():
        meta = json.loads((TARGETS_DIR / name / "target.json").read_text(encoding="utf-8"))
        assert row["description"] == meta["description"]
        if "intersection" in meta:  # portable: every rule of the profiles it intersects
            assert set(row["rules"]) == {r for part in meta["intersection"]
                                         for r in rows[part]["rules"]}
            assert row["preferredInputLayout"] == meta["preferredInputLayout"] == "nhwc"
            assert row["browser"]
            continue
        # the deviation rules of target.json first, then every limits-driven rule
        assert row["rules"][:len(meta["rules"])] == meta["rules"]
        assert set(row["rules"]) == set(meta["rules"]) | set(LIMITS_RULES)
        assert row["operators"] == _ops(name) and row["browser"]
    assert rows["chromium-tflite"]["preferredInputLayout"] == "nhwc"
    assert rows["chromium-coreml"]["preferredInputLayout"] == "nchw"


def test_targets_lists_the_builtin_profiles_as_text() -> None:
    res = CliRunner().invoke(cli, ["targets"])
    assert res.exit_code == 0, res.output
    for name in known_targets():
        assert f"\n{name}: " in "\n" + res.output
    assert "preferred input layout nhwc" in res.output
    assert "HeadlessChrome/153" in res.output
