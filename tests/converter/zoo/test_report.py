"""`webnn-convert zoo` lists every model it did not run, with the reason, in the text output,
report.json (reason_code), report.md and report.html: missing model files and slow entries
left out without --include-slow."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from click.testing import CliRunner

from cli.main import cli
from tests.cli.models import tiny_cnn

MANIFEST = """
[[model]]
name = "cnn"
path = "cnn.onnx"
free_dims = { batch = 1 }

[[model]]
name = "cnn_slow <b>"
path = "cnn.onnx"
free_dims = { batch = 2 }
slow = true

[[model]]
name = "gone"
path = "gone.onnx"
"""


class _Skipped(HTMLParser):
    """The text of each <li> of the <ul id="skipped"> list (references decoded)."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[str] = []
        self._in_list = self._in_item = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "ul" and ("id", "skipped") in attrs:
            self._in_list = True
        elif tag == "li" and self._in_list:
            self._in_item = True
            self.items.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "li":
            self._in_item = False
        elif tag == "ul":
            self._in_list = False

    def handle_data(self, data: str) -> None:
        if self._in_item:
            self.items[-1] += data


def test_zoo_lists_skipped_models_with_the_reason(tmp_path: Path) -> None:
    tiny_cnn(tmp_path / "cnn.onnx")
    manifest = tmp_path / "zoo.toml"
    manifest.write_text(MANIFEST)
    report = tmp_path / "report"
    r = CliRunner().invoke(cli, ["zoo", str(manifest), "--report", str(report),
                                 "--no-progress"])
    assert r.exit_code == 0, r.output  # skipped models do not fail the run
    lines = {line.split()[0]: line for line in r.stdout.splitlines() if line.strip()}
    assert "PASS" in lines["cnn"]
    assert "SKIPPED" in lines["cnn_slow"] and "--include-slow" in lines["cnn_slow"]
    assert "SKIPPED" in lines["gone"] and "'gone.onnx' not found" in lines["gone"]
    assert "3 models: 1 pass, 0 fail, 0 error, 2 skipped" in r.stdout

    data = json.loads((report / "report.json").read_text())
    by_name = {m["name"]: m for m in data["models"]}
    assert by_name["cnn_slow <b>"]["status"] == "skipped"
    assert by_name["cnn_slow <b>"]["reason_code"] == "not_run"
    assert "--include-slow" in by_name["cnn_slow <b>"]["message"]
    assert by_name["gone"]["reason_code"] == "not_available"

    md = (report / "report.md").read_text()
    section = md.split("## Skipped models", 1)[1]
    assert "- **cnn_slow &lt;b>**: slow entry, not run (use --include-slow" in section
    assert "- **gone**: model file 'gone.onnx' not found" in section

    page = (report / "report.html").read_text()
    assert "cnn_slow <b>" not in page and "cnn_slow &lt;b&gt;" in page
    parser = _Skipped()
    parser.feed(page)
    assert parser.items == [
        "cnn_slow <b>: slow entry, not run (use --include-slow, or --filter NAME)",
        "gone: model file 'gone.onnx' not found"]

    # --include-slow runs it; a --filter naming it runs it too.
    r = CliRunner().invoke(cli, ["zoo", str(manifest), "--include-slow", "--json",
                                 "--no-progress"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["summary"] == {"total": 3, "pass": 2, "fail": 0, "error": 0,
                                               "skipped": 1}
    r = CliRunner().invoke(cli, ["zoo", str(manifest), "--filter", "slow", "--json",
                                 "--no-progress"])
    assert [m["status"] for m in json.loads(r.stdout)["models"]] == ["pass"]


def test_reports_without_skipped_models_have_no_section(tmp_path: Path) -> None:
    tiny_cnn(tmp_path / "cnn.onnx")
    manifest = tmp_path / "zoo.toml"
    manifest.write_text(MANIFEST.split("[[model]]\nname = \"cnn_slow")[0])
    r = CliRunner().invoke(cli, ["zoo", str(manifest), "--report", str(tmp_path / "r"),
                                 "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "Skipped models" not in (tmp_path / "r" / "report.md").read_text()
    assert 'id="skipped"' not in (tmp_path / "r" / "report.html").read_text()
