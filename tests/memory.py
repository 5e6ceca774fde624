"""Peak memory of a child process, measured by the child itself: VmHWM in /proc/self/status,
the resident high-water mark of the memory of the program it runs. (`ru_maxrss` is no measure
of a child: Linux carries the parent's high-water mark over into it at fork and exec, so a
child of a 2 GB pytest worker reports 2 GB however little it uses.)"""

from __future__ import annotations

import os
from pathlib import Path

PEAK_FILE_VAR = "WEBNN_TEST_PEAK_FILE"

PEAK_HOOK = f"""
import atexit as _atexit, os as _os
def _write_peak():
    with open("/proc/self/status") as _status:
        _kib = next(l.split()[1] for l in _status if l.startswith("VmHWM:"))
    with open(_os.environ["{PEAK_FILE_VAR}"], "w") as _out:
        _out.write(_kib)
_atexit.register(_write_peak)
"""
"""Python lines that make a child write its VmHWM (KiB) at exit into the file named by the
environment variable `PEAK_FILE_VAR`; put them first in a `python -c` script."""


def vm_hwm_kib() -> int:
    """This process's resident high-water mark (KiB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status")


def peak_kib(path: str | os.PathLike[str]) -> int:
    """The peak a child wrote with `PEAK_HOOK` (KiB); an AssertionError when it wrote none
    (it did not exit normally)."""
    text = Path(path).read_text() if Path(path).is_file() else ""
    assert text, "the child wrote no peak (it did not exit through Python)"
    return int(text)
