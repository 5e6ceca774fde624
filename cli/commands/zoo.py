"""`webnn-convert zoo`: convert and validate every model of the zoo manifests."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..common import (
    BACKENDS,
    DEVICES,
    EXIT_FAIL,
    CommandError,
    common_options,
    emit_json,
    handled,
    progress_option,
    want_progress,
)


@click.command()
@click.argument("manifests", nargs=-1, type=click.Path(dir_okay=False))
@click.option("-j", "--jobs", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Models validated in parallel (processes).")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default=None,
              help="Write report.json, report.md and report.html into this folder.")
@click.option("--backend", type=click.Choice(BACKENDS), default="reference",
              show_default=True)
@click.option("--device", type=click.Choice(DEVICES), default="cpu", show_default=True)
@click.option("--filter", "filters", multiple=True, metavar="NAME",
              help="Only models whose name contains NAME (repeatable).")
@click.option("--include-slow", is_flag=True, help="Also run entries marked slow.")
@progress_option
@common_options
def zoo(manifests: tuple[str, ...], jobs: int, report_dir: str | None, backend: str,
        device: str, filters: tuple[str, ...], include_slow: bool, progress: bool | None,
        debug: bool, as_json: bool) -> None:
    """Convert and validate every model of the MANIFESTS (default: models/zoo.toml and
    models/zoo_tflite.toml, where they exist) and write the reports."""
    with handled(debug, as_json):
        from converter.zoo import default_manifests, read_manifests, run_zoo, write_reports

        paths = [Path(m) for m in manifests] or default_manifests()
        if not paths:
            raise CommandError("no manifest given and none of models/zoo.toml, "
                               "models/zoo_tflite.toml exists")
        entries = read_manifests(paths, generate=False)  # generated models: when run
        if filters:
            entries = [e for e in entries if any(f.lower() in e.name.lower() for f in filters)]
        skip = {e.name: "slow entry, not run (use --include-slow, or --filter NAME)"
                for e in entries if e.slow and not include_slow and not filters}
        if not entries:
            raise CommandError("no model matches" + (f" --filter {' '.join(filters)}"
                                                     if filters else ""))
        if not want_progress(progress, as_json):
            report = run_zoo(entries, jobs=jobs, backend=backend, device=device, skip=skip)
        else:
            with click.progressbar(length=len(entries), label="zoo", file=sys.stderr,
                                   show_pos=True, item_show_func=lambda s: s) as bar:
                report = run_zoo(entries, jobs=jobs, backend=backend, device=device, skip=skip,
                                 on_done=lambda name: bar.update(1, name))
        written = write_reports(report, Path(report_dir)) if report_dir else []
        if as_json:
            emit_json(report.to_dict())
        else:
            click.echo(report.to_text())
            for p in written:
                click.echo(f"wrote {p}")
        if not report.passed:
            raise click.exceptions.Exit(EXIT_FAIL)
