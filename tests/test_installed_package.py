"""A non-editable install in a fresh venv, run from a folder outside the checkout, finds its
data (slow: it builds the venv). The browser half (`targets --sweep`, `validate --browser`)
is tests/browser/test_installed_package.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.installed import ROOT, install_non_editable, run_installed

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def bindir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_non_editable(tmp_path_factory.mktemp("installed"))


def test_the_checkout_is_not_on_the_path(bindir: Path, tmp_path: Path) -> None:
    done = run_installed(bindir, "python", "-c",
                         "import converter, sys; print(converter.__file__); print(sys.path)",
                         cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    where, path = done.stdout.splitlines()[:2]
    assert "site-packages" in where and str(ROOT) not in where
    assert str(ROOT) not in path


def test_zoo_runs_the_shipped_manifests(bindir: Path, tmp_path: Path) -> None:
    done = run_installed(bindir, "webnn-convert", "zoo", "--filter", "generated_tiny_cnn",
                         "--report", tmp_path / "report", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = json.loads((tmp_path / "report" / "report.json").read_text())["models"]
    assert [(r["name"], r["status"]) for r in rows] == [("generated_tiny_cnn", "pass")]


def test_the_conformance_cases_are_installed(bindir: Path, tmp_path: Path) -> None:
    code = ("from converter.validate.sweep import all_cases; "
            "from converter.validate.page_server import HARNESS_FILES; "
            "print(len(all_cases()), sorted(p.name for p in HARNESS_FILES.iterdir()))")
    done = run_installed(bindir, "python", "-c", code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    count, files = done.stdout.split(" ", 1)
    assert int(count) > 1600
    assert files.strip() == str(["module_page.html", "package-lock.json", "package.json",
                                 "run_page.mjs"])
