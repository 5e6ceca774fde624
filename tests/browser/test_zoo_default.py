"""Every model of the shipped zoos (zoo.toml, zoo_tflite.toml; the entries the default run
takes), converted with no flags (the default target, portable), builds and matches the
original framework in the real headless Chromium: `webnn-convert zoo --browser`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import cli

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_shipped_zoo_converted_with_no_flags_passes_in_the_browser(browser: Any) -> None:
    r = CliRunner().invoke(cli, ["zoo", "--browser", "--json", "--no-progress"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["models"]
    ran = [row for row in rows if row["status"] != "skipped"]
    assert len(ran) >= 20, [row["name"] for row in rows]
    for row in ran:
        assert row["status"] == "pass", (row["name"], row.get("message"))
        note = next(n for n in row["notes"] if n.startswith("real browser: "))
        assert note.startswith("real browser: pass"), (row["name"], note)
        assert "target portable" in note, note
