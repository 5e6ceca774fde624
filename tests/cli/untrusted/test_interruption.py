"""Untrusted input through the real CLI: clean interruption (SIGINT -> 130, SIGTERM -> 143)
of every long command and of the forked reference child: one `error: ` line, no traceback,
no temporary output left behind (oracle: the file system)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.untrusted.cli_run import (
    cli_env,
    invoke,
)
from tests.timing import HANG_GUARD_S, wait_for

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")


# -- interruption ------------------------------------------------------------------------------

SLOW = """
import sys, time
from pathlib import Path
flag = Path(sys.argv[1])
def slow(*args, **kwargs):
    flag.write_text("started")
    time.sleep(60)
TARGET
from cli.main import main
main(sys.argv[2:])
"""

TARGETS = {
    "convert": "import converter.api as m; m.convert = slow",
    "validate": "import converter.validate.core as m; m.run_source = slow",
    "zoo": "import converter.zoo.runner as m; m.run_entry = slow",
    # the outputs' temporary file exists while an array of it is written
    "run": ("import numpy.lib.format as m\nreal = m.write_array\n"
            "def write_array(f, *a, **kw):\n    real(f, *a, **kw)\n    slow()\n"
            "m.write_array = write_array"),
}



@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("command", sorted(TARGETS))
def test_interruption_exits_cleanly(tiny: Path, tmp_path: Path, command: str,
                                    sig: signal.Signals) -> None:
    work = tmp_path / "work"
    work.mkdir()
    if command == "convert":
        args = ["convert", tiny, "--dim", "batch=1", "-o", work / "out"]
    elif command == "validate":
        args = ["validate", tiny, "--dim", "batch=1"]
    elif command == "zoo":
        manifest = work / "zoo.toml"
        manifest.write_text(f'[[model]]\nname = "tiny"\npath = "{tiny.as_posix()}"\n'
                            'free_dims = { batch = 1 }\n')
        args = ["zoo", manifest, "--report", work / "report"]
    else:
        assert invoke("convert", tiny, "--dim", "batch=1", "-o", work / "graph").exit_code == 0
        args = ["run", work / "graph", "--inputs", tiny.parent / "image.npz", "-o",
                work / "out.npz"]
    before = sorted(p.name for p in work.iterdir())
    flag = tmp_path / "started"
    script = tmp_path / "slow.py"
    script.write_text(SLOW.replace("TARGET", TARGETS[command]))
    proc = subprocess.Popen([sys.executable, str(script), str(flag), *map(str, args)],
                            env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(lambda: flag.exists() or proc.poll() is not None)
    assert flag.exists(), proc.communicate()[1]
    if command == "run":
        assert sorted(p.name for p in work.iterdir()) != before  # the temporary file
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=HANG_GUARD_S)
    assert proc.returncode == 128 + sig, err
    word = "interrupted" if sig == signal.SIGINT else "terminated"
    assert err.decode() == f"error: {word}\n"
    assert sorted(p.name for p in work.iterdir()) == before


_SLOW_REFERENCE = """
import os, sys, time
from pathlib import Path
import converter.frontends.onnx.reference as m
flag = Path(sys.argv[1])
def slow(*args, **kwargs):
    flag.write_text(str(os.getpid()))  # in the forked child
    time.sleep(60)
m._run_onnx = slow
from cli.main import main
main(sys.argv[2:])
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupting_the_reference_child(tiny: Path, tmp_path: Path,
                                          sig: signal.Signals) -> None:
    """The signal reaches only the CLI's process (as `kill PID` sends it): it exits 130 / 143
    with its one line, and the forked reference child it was waiting for is gone too."""
    flag = tmp_path / "child"
    script = tmp_path / "slow_reference.py"
    script.write_text(_SLOW_REFERENCE)
    proc = subprocess.Popen([sys.executable, str(script), str(flag), "validate", str(tiny),
                             "--dim", "batch=1"], env=cli_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    wait_for(lambda: (flag.exists() and flag.read_text()) or proc.poll() is not None)
    assert flag.exists(), proc.communicate()[1]
    child = int(flag.read_text())
    assert child != proc.pid
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=HANG_GUARD_S)
    assert proc.returncode == 128 + sig, err
    word = "interrupted" if sig == signal.SIGINT else "terminated"
    assert err.decode() == f"error: {word}\n"
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)
