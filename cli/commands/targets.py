"""`webnn-convert targets`: what a WebNN implementation supports (`opSupportLimits()`)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import click

from ..common import CommandError, common_options, emit_json, handled


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@click.command()
@click.option("--from-browser", "from_browser", type=click.Path(dir_okay=False),
              default=None, metavar="OUT.json",
              help="Write the opSupportLimits() of a real headless Chromium's WebNN (CPU: "
                   "LiteRT/XNNPACK) to OUT.json. Needs Node.js and npm; the browser is "
                   "installed on first use into ~/.cache/webnn-converter/browser "
                   "($WEBNN_BROWSER_HOME).")
@common_options
def targets(from_browser: str | None, debug: bool, as_json: bool) -> None:
    """Record what a WebNN implementation supports: its context's opSupportLimits() (data
    types and ranks per operator and operand, preferred input layout, largest tensor)."""
    with handled(debug, as_json):
        if from_browser is None:
            raise CommandError("nothing to do: give --from-browser OUT.json")
        from converter.validate.browser import browser_limits, ensure_browser

        setup = ensure_browser()
        limits = browser_limits(setup)
        path = Path(from_browser)
        if not path.parent.is_dir():
            raise CommandError(f"{path.parent}: no such folder")
        _write_atomic(path, json.dumps(limits, indent=2, sort_keys=True) + "\n")
        ops = sorted(k for k, v in limits.items() if isinstance(v, dict)
                     and k not in ("input", "constant", "output"))
        summary = {"path": str(path), "browser": setup.browser, "flags": list(setup.flags),
                   "operators": len(ops),
                   "preferredInputLayout": limits.get("preferredInputLayout"),
                   "maxTensorByteLength": limits.get("maxTensorByteLength")}
        if as_json:
            emit_json(summary)
        else:
            click.echo(f"wrote {path}: opSupportLimits() of {setup.browser} ({len(ops)} "
                       f"operators, preferred input layout "
                       f"{limits.get('preferredInputLayout')})")
