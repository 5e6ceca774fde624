"""Running the real CLI (`webnn-convert`) on untrusted input, shared by the tests of this
folder: `invoke` in process, `capped_cli` in a subprocess whose address space is capped at
2 GiB, `raiser` to stand in for a function that fails. Every failure must be exactly one
`error: ` line on stderr holding only printable characters (`one_error`,
`one_error_line`), with exit code 2 (130 / 143 when interrupted)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import numpy as np
from click.testing import CliRunner, Result

from cli.main import cli
from tests.cli.models import ROOT
from tests.timing import HANG_GUARD_S

IMAGE = np.random.default_rng(3).random((1, 3, 16, 16), dtype=np.float32)


def invoke(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def one_error(r: Result, code: int = 2) -> str:
    """The only stderr line of a failed command: `error: ...`, printable characters only."""
    assert r.exit_code == code, (r.exit_code, r.output)
    assert "Traceback" not in r.output
    assert r.stderr.endswith("\n") and r.stderr.count("\n") == 1, repr(r.stderr)
    line = r.stderr[:-1]
    assert line.startswith("error: ") and line.isprintable(), repr(line)
    return line


def raiser(exc: BaseException) -> Any:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise exc
    return boom


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


CAPPED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from cli.main import main
sys.argv = ["webnn-convert", *sys.argv[1:]]
main()
"""
"""The CLI in a subprocess (native libraries write to the real file descriptor 2) whose
address space is capped at 2 GiB."""


def capped_cli(*args: object) -> subprocess.CompletedProcess[str]:
    env = cli_env()
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-c", CAPPED, *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=HANG_GUARD_S)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]
