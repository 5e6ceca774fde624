"""A non-editable install of this checkout into a fresh virtual environment, for the tests
that check the installed package works without the checkout (issue 22: the library reads
no file of the source tree; its data ships as package data).

`install_non_editable(folder)` copies the checkout's files (tracked and untracked, without
what .gitignore ignores) into `folder/src`, creates `folder/venv` (no system site-packages),
and runs `pip install folder/src` there (dependencies from the index pip is configured with;
about 15 s with a local mirror). `run_installed` runs a command of that environment with no
PYTHONPATH, so nothing of the checkout is importable."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HANG_GUARD_S = 900


def _checkout_files() -> list[str]:
    done = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                           "--exclude-standard"], cwd=ROOT, capture_output=True,
                          check=True)
    return [name for name in done.stdout.decode().split("\0")
            if name and (ROOT / name).is_file()]


def install_non_editable(folder: Path) -> Path:
    """The bin folder of a fresh venv holding a non-editable install of the checkout."""
    src = folder / "src"
    for name in _checkout_files():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    env_dir = folder / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False, symlinks=True).create(env_dir)
    bindir = env_dir / "bin"
    done = subprocess.run([str(bindir / "python"), "-m", "pip", "install", "-q",
                           "--disable-pip-version-check", str(src)],
                          capture_output=True, text=True, timeout=HANG_GUARD_S, check=False,
                          env=clean_env())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    shutil.rmtree(src)  # the installed package must not need it
    return bindir


def clean_env() -> dict[str, str]:
    """The environment without PYTHONPATH (and without this interpreter's venv on PATH)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    here = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if p != here)
    return env


def run_installed(bindir: Path, *args: str | Path, cwd: Path
                  ) -> subprocess.CompletedProcess[str]:
    """`bindir/ARGS[0] ARGS[1:]` in `cwd`, the checkout unreachable."""
    return subprocess.run([str(bindir / str(args[0])), *map(str, args[1:])], cwd=cwd,
                          env=clean_env(), capture_output=True, text=True,
                          timeout=HANG_GUARD_S, check=False)
