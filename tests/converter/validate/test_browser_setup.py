"""The first installation of the real browser is announced (issue 21.4): ONE line on stderr
naming what is installed, how big it is and where, written BEFORE npm runs; a progress line
only when stderr is a terminal. No browser is downloaded here: `npm` is a stub script first
on PATH that records how it was called (and what the CLI's stderr held at that moment) and
fails, and the cache folder is a temporary one ($WEBNN_BROWSER_HOME)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from converter.validate.browser_setup import (
    DISK_MB,
    DOWNLOAD_MB,
    browser_home,
    install_line,
    installed,
)
from converter.validate.page_server import HARNESS_FILES
from tests.cli.models import tiny_cnn
from tests.terminal import run_in_terminal

ROOT = Path(__file__).resolve().parents[3]
HANG_GUARD_S = 300

STUB = """#!/bin/sh
# a stand-in for npm: records its arguments, its folder and the CLI's stderr so far; fails
printf '%s\\n' "$*" > "$STUB_RECORD.args"
pwd > "$STUB_RECORD.cwd"
cat "$STUB_CLI_STDERR" > "$STUB_RECORD.stderr" 2>/dev/null
echo "npm ERR! stub npm: no network here" >&2
exit 1
"""

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js on PATH")


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return tiny_cnn(tmp_path / "tiny.onnx")


def _env(tmp_path: Path, home: Path) -> dict[str, str]:
    stub = tmp_path / "stub"
    stub.mkdir(exist_ok=True)
    (stub / "npm").write_text(STUB)
    (stub / "npm").chmod(0o755)
    env = dict(os.environ, WEBNN_BROWSER_HOME=str(home), STUB_RECORD=str(tmp_path / "npm"),
               STUB_CLI_STDERR=str(tmp_path / "cli.stderr"),
               PATH=os.pathsep.join([str(stub), os.environ.get("PATH", "")]),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env.pop("WEBNN_CHROME", None)
    return env


def _cli(model: Path) -> list[str]:
    return [sys.executable, "-c", "from cli.main import main; main()", "validate",
            "--browser", "--dim", "batch=1", str(model)]


def test_the_first_install_is_announced_before_npm_runs(model: Path, tmp_path: Path) -> None:
    home = tmp_path / "cache home"
    stderr_file = tmp_path / "cli.stderr"
    with open(stderr_file, "wb") as err:
        done = subprocess.run(_cli(model), env=_env(tmp_path, home), stdout=subprocess.PIPE,
                              stderr=err, stdin=subprocess.DEVNULL, timeout=HANG_GUARD_S,
                              check=False)
    lines = stderr_file.read_text().splitlines()
    announced = [line for line in lines if line.startswith("installing ")]
    assert announced == [install_line(home)], lines
    line = announced[0]
    assert str(home) in line and "headless Chromium" in line and "MB" in line
    assert "@sparticuz/chromium" in line and "puppeteer-core" in line
    # npm ran (npm ci in the cache folder) and the line was on stderr when it started
    assert (tmp_path / "npm.args").read_text().split()[0] == "ci"
    assert Path((tmp_path / "npm.cwd").read_text().strip()) == home
    assert line in (tmp_path / "npm.stderr").read_text()
    # its failure: one error line after the announcement, naming the folder; no progress
    assert done.returncode != 0
    assert len(lines) == 2 and lines[0] == line, lines
    assert lines[1].startswith("error: ") and str(home) in lines[1] and "npm ci" in lines[1]
    assert "stub npm: no network here" in lines[1]
    assert "\r" not in stderr_file.read_text()


def test_a_terminal_gets_a_progress_line(model: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (tmp_path / "cli.stderr").write_text("")
    code, _, text = run_in_terminal(_cli(model), _env(tmp_path, home))
    assert install_line(home) in text
    assert f"\r  0 of ~{DISK_MB} MB installed into {home}" in text
    assert "\r\x1b[K" in text  # erased at the end
    assert code != 0


def test_an_installed_cache_is_not_announced_and_npm_does_not_run(model: Path, tmp_path: Path
                                                                   ) -> None:
    home = tmp_path / "home"
    (home / "node_modules").mkdir(parents=True)
    (home / "node_modules" / ".package-lock.json").write_text("{}")
    for name in ("package.json", "package-lock.json"):
        (home / name).write_bytes((HARNESS_FILES / name).read_bytes())
    assert installed(home)
    env = _env(tmp_path, home)
    env["WEBNN_CHROME"] = str(tmp_path / "no-such-chrome")  # the start fails at once
    done = subprocess.run(_cli(model), env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=HANG_GUARD_S, check=False)
    assert not (tmp_path / "npm.args").exists()
    assert "installing" not in done.stderr
    assert done.returncode != 0
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: "), done.stderr


def test_install_line_names_the_pinned_versions_and_sizes(tmp_path: Path) -> None:
    deps = json.loads((HARNESS_FILES / "package.json").read_text())["dependencies"]
    line = install_line(tmp_path)
    assert f"@sparticuz/chromium {deps['@sparticuz/chromium']}" in line
    assert f"puppeteer-core {deps['puppeteer-core']}" in line
    assert f"~{DOWNLOAD_MB} MB download" in line and f"~{DISK_MB} MB on disk" in line
    assert line.endswith(f"into {tmp_path} (first use only)")
    assert "\n" not in line


def test_browser_home_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBNN_BROWSER_HOME", str(tmp_path / "x"))
    assert browser_home() == (tmp_path / "x").resolve()
    monkeypatch.delenv("WEBNN_BROWSER_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert browser_home() == (tmp_path / "cache").resolve() / "webnn-converter" / "browser"
