"""How to install an optional extra, said so that it works from where the user stands.

The package's files lie either in a source tree (a checkout: `pyproject.toml` beside the
`converter` package, as an editable install or a run from the tree leaves them) or in an
installed distribution (site-packages). A checkout gets `pip install -e '.[EXTRA]'` (the
folder spelled out when the current folder is not the tree's root); an installed package
gets `pip install 'webnn-converter[EXTRA]'`. Every install hint of the converter and its
command line comes from `install_hint`.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

DISTRIBUTION = "webnn-converter"
"""The distribution name on PyPI (pyproject.toml's `project.name`)."""


def source_tree() -> Path | None:
    """The checkout the running package lives in (the folder holding pyproject.toml and
    the `converter` package, whose pyproject names this distribution), None when the
    package is installed."""
    root = Path(__file__).resolve().parents[2]
    project = root / "pyproject.toml"
    try:
        text = project.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return root if f'name = "{DISTRIBUTION}"' in text else None


def install_hint(extra: str) -> str:
    """The command that installs `extra` (e.g. "tflite", "torch") for the running package:
    `pip install 'webnn-converter[EXTRA]'` for an installed package, `pip install -e
    '.[EXTRA]'` from a checkout (its root spelled out when the current folder is another)."""
    root = source_tree()
    if root is None:
        return f"pip install {shlex.quote(f'{DISTRIBUTION}[{extra}]')}"
    try:
        here = Path(os.getcwd()).resolve() == root
    except OSError:
        here = False
    where = "." if here else str(root)
    return f"pip install -e {shlex.quote(f'{where}[{extra}]')}"
