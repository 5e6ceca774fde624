"""`webnn-convert targets`: what a WebNN implementation supports (`opSupportLimits()`) and how
it runs the WebNN conformance cases (`--sweep`, see `converter.api.sweep`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from cli.options import common_options, want_progress
from cli.output import EXIT_FAIL, CommandError, emit_json, handled, progress_reporter
from converter.zoo.report import write_text_atomic


@click.command()
@click.option("--from-browser", "from_browser", type=click.Path(dir_okay=False),
              default=None, metavar="OUT.json",
              help="Write the opSupportLimits() of a real headless Chromium's WebNN (CPU: "
                   "LiteRT/XNNPACK) to OUT.json. Needs Node.js and npm; the browser is "
                   "installed on first use into ~/.cache/webnn-converter/browser "
                   "($WEBNN_BROWSER_HOME).")
@click.option("--sweep", "sweep_dir", type=click.Path(file_okay=False), default=None,
              metavar="OUT_DIR",
              help="Run every WebNN conformance case (the package's WPT copy, plus pool cases "
                   "with float64-formula expected values) in the real browser, in one session, "
                   "and write OUT_DIR/sweep.json (per case: operator, data types, options, status, "
                   "error) and OUT_DIR/limits.json (its opSupportLimits()). The graphs the "
                   "--target rules rewrite run rewritten too. Exits 1 when a case fails "
                   "without a rule or an entry in the target's known_failures.json. "
                   "`webnn-convert targets --sweep converter/passes/targets/chromium-tflite` "
                   "regenerates the shipped data.")
@click.option("--target", "target_name", default="chromium-tflite", show_default=True,
              metavar="NAME|LIMITS.json",
              help="With --sweep: the target whose rewrite rules and known failures the sweep "
                   "checks.")
@click.option("--filter", "filters", multiple=True, metavar="TEXT",
              help="With --sweep: only cases whose id (<file>:<index>) or name contains TEXT "
                   "(repeatable); the files are still written.")
@common_options
def targets(from_browser: str | None, sweep_dir: str | None, target_name: str,
            filters: tuple[str, ...], debug: bool, as_json: bool) -> None:
    """List the built-in targets (no option: name, Chromium version, description, operator
    count, preferred input layout, rewrite rules), or record what a WebNN implementation
    supports: its context's opSupportLimits() (data types and ranks per operator and
    operand, preferred input layout, largest tensor), and (--sweep) how it runs every
    conformance case."""
    with handled(debug, as_json):
        if from_browser is None and sweep_dir is None:
            _list_targets(as_json)
            return
        if sweep_dir is not None:
            _sweep(Path(sweep_dir), target_name, filters, as_json)
            return
        assert from_browser is not None
        from converter.api import browser_limits, ensure_browser

        setup = ensure_browser()
        limits = browser_limits(setup)
        path = Path(from_browser)
        if not path.parent.is_dir():
            raise CommandError(f"{path.parent}: no such folder")
        write_text_atomic(path, json.dumps(limits, indent=2, sort_keys=True) + "\n")
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


def target_summary(name: str) -> dict[str, Any]:
    """One built-in target as `targets` lists it: name, browser (Chromium version),
    description, operator count, preferred input layout, rules."""
    from converter.api import load_target

    t = load_target(name)
    ops = [k for k, v in t.limits.items()
           if k not in ("input", "constant", "output") and hasattr(v, "keys")]
    return {"name": t.name, "browser": t.browser, "description": t.description,
            "operators": len(ops), "preferredInputLayout": t.limits.get("preferredInputLayout"),
            "rules": list(t.rules)}


def _list_targets(as_json: bool) -> None:
    """`targets` with no option: the built-in targets."""
    from converter.api import known_targets

    rows = [target_summary(n) for n in known_targets()]
    if as_json:
        emit_json({"targets": rows})
        return
    for r in rows:
        click.echo(f"{r['name']}: {r['description']}")
        layout = r["preferredInputLayout"] or "none (the graph keeps the source's)"
        click.echo(f"  browser {r['browser']}; {r['operators']} operators; preferred input "
                   f"layout {layout}")
        click.echo(f"  rules: {', '.join(r['rules']) or '(none)'}")


def _sweep(folder: Path, target_name: str, filters: tuple[str, ...], as_json: bool) -> None:
    """`targets --sweep`: run the conformance cases, write the files, report."""
    from converter.api import (
        browser_limits,
        check_sweep,
        ensure_browser,
        load_target,
        sweep,
        sweep_cases,
        write_sweep,
    )

    if folder.exists() and not folder.is_dir():
        raise CommandError(f"{folder}: not a folder")
    if not folder.parent.is_dir():
        raise CommandError(f"{folder.parent}: no such folder")
    target = load_target(target_name)
    cases = sweep_cases()
    if filters:
        cases = [c for c in cases if any(f in c.id or f in c.name for f in filters)]
        if not cases:
            raise CommandError(f"no conformance case matches {', '.join(filters)}")
    say = progress_reporter(want_progress(None, as_json))
    setup = ensure_browser()
    say(f"sweeping {len(cases)} cases in {setup.browser}")
    doc = sweep(cases, target=target, setup=setup, progress=say)
    written = write_sweep(doc, browser_limits(setup), folder)
    new, stale = check_sweep(doc, target.known_failures())
    if filters:
        stale = []  # entries for cases left out are not stale
    c = doc["counts"]
    if as_json:
        emit_json({"folder": str(folder), "files": [str(p) for p in written],
                   "browser": doc["browser"], "target": target.name, "counts": c,
                   "new_deviations": new, "stale_known_failures": stale})
    else:
        click.echo(f"swept {c['cases']} conformance cases in {doc['browser']}")
        click.echo("  as converted:        " + ", ".join(f"{k} {v}"
                                                       for k, v in c["raw"].items()))
        click.echo(f"  with {target.name} rules: " + ", ".join(
            f"{k} {v}" for k, v in c["with_rules"].items()) + f" ({c['rewritten']} rewritten)")
        for p in written:
            click.echo(f"  wrote {p}")
        for line in stale:
            click.echo(f"  stale known failure: {line}")
        for line in new:
            click.echo(f"  new deviation: {line}")
    if new:
        if not as_json:
            click.echo(f"error: {len(new)} case(s) fail in {doc['browser']} without a rule or "
                       f"a known-failure entry of {target.name}", err=True)
        raise click.exceptions.Exit(EXIT_FAIL)
