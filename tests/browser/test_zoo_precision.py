"""`webnn-convert zoo --browser --precision float16`: the real-browser column runs the float16
graph (it converted at float32 whatever --precision said) under the row's float16 tolerance:
a sigmoid graph's browser error against onnxruntime is float16 rounding (above float32's, at
most the float16 tolerance) and the note names the precision."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import cli
from tests.converter.zoo.test_profile_columns import _setup

pytestmark = pytest.mark.browser


def test_zoo_browser_column_runs_the_float16_graph(browser: Any, tmp_path: Path) -> None:
    manifest, _ = _setup(tmp_path)
    runs = {}
    for precision in ("float32", "float16"):
        res = CliRunner().invoke(cli, ["zoo", str(manifest), "--filter", "sig", "--browser",
                                       "--precision", precision, "--json", "--no-progress"])
        assert res.exit_code == 0, res.output
        (row,) = json.loads(res.stdout)["models"]
        (out,) = [o for o in row["outputs"] if o["name"] == "y (browser)"]
        note = next(n for n in row["notes"] if n.startswith("real browser"))
        runs[precision] = (out, note, row)
    out32, note32, _ = runs["float32"]
    out16, note16, row16 = runs["float16"]
    assert "float16" in note16 and "float16" not in note32
    assert out32["max_abs"] < 1e-6  # float32 on both sides
    # float16 rounding of sigmoid values near 0.5 (ulp 2**-11), within the widened tolerance
    assert 1e-5 < out16["max_abs"] <= row16["atol"] + row16["rtol"] * 1.0
    assert row16["atol"] >= 1e-2
