"""Running a command with its stderr on a pseudo-terminal, as a person at a terminal sees it."""

from __future__ import annotations

import os
import pty
import select
import subprocess
from collections.abc import Mapping, Sequence

from tests.timing import HANG_GUARD_S


def run_in_terminal(command: Sequence[str], env: Mapping[str, str]) -> tuple[int, str, str]:
    """Run `command` with stderr on a pseudo-terminal: (exit code, stdout, terminal text)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(list(command), env=dict(env), stdout=subprocess.PIPE,
                            stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    stdout = proc.stdout.read().decode() if proc.stdout else ""
    proc.wait(timeout=HANG_GUARD_S)
    os.close(master)
    return proc.returncode, stdout, b"".join(chunks).decode(errors="replace")
