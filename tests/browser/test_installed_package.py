"""The browser half of the installed-package check (slow: it builds a venv): a non-editable
install in a fresh venv, run from a folder outside the checkout, drives the real browser with
its packaged harness and conformance cases: `targets --sweep` on a few cases and
`validate --browser` on a shipped model (the tiny CNN its generator makes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.installed import install_non_editable, run_installed

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def bindir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_non_editable(tmp_path_factory.mktemp("installed"))


def test_sweep_from_the_installed_package(browser: Any, bindir: Path, tmp_path: Path) -> None:
    done = run_installed(bindir, "webnn-convert", "targets", "--sweep", tmp_path / "sweep",
                         "--filter", "tanh", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    doc = json.loads((tmp_path / "sweep" / "sweep.json").read_text())
    assert doc["cases"] and all("tanh" in (c["id"] + c["name"]).lower() for c in doc["cases"])
    assert {c["status"] for c in doc["cases"]} == {"pass"}


def test_validate_in_the_browser_from_the_installed_package(browser: Any, bindir: Path,
                                                            tmp_path: Path) -> None:
    made = run_installed(bindir, "python", "-m", "converter.zoo.models.make_tiny_cnn",
                         "tiny_cnn.onnx", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    done = run_installed(bindir, "webnn-convert", "validate", "tiny_cnn.onnx", "--dim",
                         "batch=1", "--browser", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["verdict"] == "pass" and report["browser"]["status"] == "pass", report
