"""The zoo reports get a "Real browser" column only when a --browser run left its verdicts."""

from __future__ import annotations

from converter.zoo import render_html, render_markdown
from converter.zoo.report import BROWSER_NOTE, browser_verdict
from converter.zoo.runner import ZooReport, ZooResult


def _report(notes: tuple[str, ...]) -> ZooReport:
    r = ZooResult("m<1>", "pass", format="onnx", max_abs=0.0, max_rel=0.0, notes=notes,
                  timings={"total": 1.0})
    return ZooReport((r,), "reference", "cpu", 1, "now", 1.0)


def test_real_browser_column() -> None:
    plain = _report(())
    assert "Real browser" not in render_markdown(plain)
    assert "Real browser" not in render_html(plain)
    shown = _report(("other note", BROWSER_NOTE + "unsupported: gelu: input data type <x>"))
    assert browser_verdict(shown.results[0]) == "unsupported: gelu: input data type <x>"
    md = render_markdown(shown)
    assert "| WebNN ops | Real browser | Details |" in md
    assert "| unsupported: gelu: input data type &lt;x> |" in md
    html = render_html(shown)
    assert "<th>Real browser</th>" in html and "input data type &lt;x&gt;" in html
