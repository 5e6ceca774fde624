"""The real-world suite (models/realworld.toml, docs/realworld.md) in the real headless
Chromium: each row converted with its flags (none, or the ones its first error names), run
through the exported JavaScript module and page (`validate(..., browser=True)`), matches
onnxruntime / LiteRT within the row's tolerance (validate's default when it has none).

Rows with a `known_gap` that keeps them from converting or matching are expected failures
with that reason; `kernel_spread` rows (int8 networks whose LiteRT kernels disagree by more
than validate's 2 steps) are judged as in tests/models/test_realworld.py: no further from
LiteRT's XNNPACK output than its builtin kernels are. Skipped when the models are not in the
cache folder (models/make_realworld.py makes them)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.models.realworld import Row, convert_row, litert_spread, rows

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ROWS = [r for r in rows() if r.browser]


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_runs_and_matches_in_the_browser(row: Row, browser: Any) -> None:
    from converter.api import validate

    path, result = convert_row(row)
    spread = bool(row.table.get("kernel_spread"))
    report = validate(path, free_dims=row.free_dims or None, rtol=row.rtol, atol=row.atol,
                      browser=True, result=result, locate=False)
    b = report.browser
    assert b is not None and b.status in ("pass", "fail"), b.to_text() if b else report
    assert b.browser.startswith(("HeadlessChrome/", "Chrome/"))
    assert [c.name for c in b.page_outputs] == [c.name for c in report.outputs]
    if spread:
        _check_spread(row, b)
        return
    assert b.status == "pass", b.to_text()
    assert all(c.passed for c in (*b.outputs, *b.page_outputs)), b.to_text()


def _check_spread(row: Row, b: Any) -> None:
    """The browser's outputs (module and page) no further from LiteRT's XNNPACK output than
    LiteRT's builtin kernels are (measured here on the same seed-0 inputs)."""
    from converter.api import convert, make_inputs, run_source

    result = convert(row.path, free_dims=row.free_dims or None)
    feeds = make_inputs(result.source, seed=0)
    xnnpack = run_source("tflite", row.path, result.source, feeds).outputs
    spread = litert_spread(row.path, feeds, xnnpack)
    for c in (*b.outputs, *b.page_outputs):
        assert c.max_abs <= spread[c.name], (c.name, c.max_abs, spread[c.name])
        assert c.cosine >= 0.99, (c.name, c.cosine)
