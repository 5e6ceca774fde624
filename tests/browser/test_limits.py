"""The browser's limits: `webnn-convert targets --from-browser` writes its opSupportLimits();
a graph outside them is reported as unsupported, naming the operator and data type, not as a
crash (`limit_problems` is also checked on its own, without a browser)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from cli.main import cli
from converter.core.webnn import ML, MLGraphBuilder
from converter.validate.browser import BrowserRun, classify, limit_problems


def _add(dtype: str) -> Any:
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[2, 3], data_type=dtype)
    y = b.input("y", shape=[2, 3], data_type=dtype)
    return b.build({"z": b.add(x, y)})


LIMITS = {
    "input": {"dataTypes": ["float32", "uint32"], "rankRange": {"min": 0, "max": 4}},
    "output": {"dataTypes": ["float32", "uint32"], "rankRange": {"min": 0, "max": 4}},
    "constant": {"dataTypes": ["float32"], "rankRange": {"min": 0, "max": 4}},
    "maxTensorByteLength": 1024,
    "add": {"a": {"dataTypes": ["float32"], "rankRange": {"min": 0, "max": 6}},
            "b": {"dataTypes": ["float32"], "rankRange": {"min": 0, "max": 6}},
            "output": {"dataTypes": ["float32"], "rankRange": {"min": 0, "max": 1}}},
}


def test_limit_problems_name_op_role_and_data_type() -> None:
    problems = limit_problems(_add("uint32"), LIMITS)
    assert "add: a data type uint32 (supported: float32)" in problems
    assert "add: b data type uint32 (supported: float32)" in problems
    assert any(p.startswith("add: output data type uint32") for p in problems)
    ranks = limit_problems(_add("float32"), LIMITS)
    assert ranks == ["add: output rank 2 (supported: 0 to 1)"]


def test_limit_problems_missing_op_and_size() -> None:
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[16, 32], data_type="float32")
    graph = b.build({"y": b.relu(x)})
    problems = limit_problems(graph, LIMITS)
    assert "relu: not in the browser's opSupportLimits()" in problems
    assert any("2048 bytes > maxTensorByteLength 1024" in p for p in problems)


def test_classify_reports_limits_not_a_crash() -> None:
    run = BrowserRun("Chrome/1", LIMITS, None, error="build: TypeError: Unsupported data type",
                     problems=("add: a data type uint32 (supported: float32)",))
    check = classify(run, [], [])
    assert check.status == "unsupported" and not check.passed
    assert "add: a data type uint32" in check.summary()
    assert classify(BrowserRun("Chrome/1", LIMITS, None, error="build: boom"), [], []
                    ).status == "error"


@pytest.mark.browser
def test_unsupported_data_type_in_the_browser(browser: Any) -> None:
    from converter.validate.browser import run_graph

    graph = _add("uint32")
    feeds = {"x": np.arange(6, dtype=np.uint32).reshape(2, 3),
             "y": np.ones((2, 3), np.uint32)}
    run = run_graph(graph, feeds, setup=browser)
    assert run.limits is not None and "add" in run.limits
    if "uint32" in run.limits["add"]["a"]["dataTypes"]:
        pytest.skip("this browser's WebNN adds uint32: nothing outside its limits")
    assert run.outputs is None and run.error.startswith("build:"), run
    assert any(p.startswith("add: a data type uint32") for p in run.problems), run.problems
    check = classify(run, [], [])
    assert check.status == "unsupported"
    assert "add: a data type uint32" in check.to_text()


@pytest.mark.browser
def test_targets_from_browser(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "chromium.json"
    r = CliRunner().invoke(cli, ["targets", "--from-browser", str(out)])
    assert r.exit_code == 0, r.output
    assert f"wrote {out}" in r.output and browser.browser in r.output
    limits = json.loads(out.read_text(encoding="utf-8"))
    assert limits["preferredInputLayout"] in ("nchw", "nhwc")
    assert set(limits["conv2d"]) >= {"input", "filter", "output"}
    assert "float32" in limits["add"]["a"]["dataTypes"]
    r = CliRunner().invoke(cli, ["targets"])  # no option: the built-in targets
    assert r.exit_code == 0 and "chromium-tflite:" in r.output, r.output
