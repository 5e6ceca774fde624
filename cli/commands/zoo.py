"""`webnn-convert zoo`: convert and validate every model of the zoo manifests."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from cli.options import (
    BACKENDS,
    DEVICES,
    common_options,
    precision_option,
    progress_option,
    want_progress,
)
from cli.output import EXIT_FAIL, CommandError, emit_json, handled


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
@click.option("--browser", is_flag=True,
              help="Also run each converted model in a real headless Chromium with WebNN and "
                   "compare with the original framework: the reports' \"real browser\" "
                   "column (informational: it does not change a model's status). Needs "
                   "Node.js and npm (see README, Real browser).")
@click.option("--target", "target", default=None, metavar="NAME|LIMITS.json",
              help="Convert for this WebNN implementation (a built-in profile, e.g. "
                   "chromium-tflite, or an opSupportLimits() JSON file): a report column "
                   "for it as --profiles gives; with --browser the graph run in the browser "
                   "is the one converted for it (rewritten around Chromium's deviations, see "
                   "README).")
@click.option("--profiles", "profiles", default=None, metavar="NAME,NAME|all",
              help="Also convert and validate every model under each of these targets "
                   "(built-in profiles or LIMITS.json files; 'all': every built-in one): a "
                   "report column per profile with pass, fail, error or unsupported (what "
                   "the graph uses outside the profile's limits). Fails when a column does.")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Run the models on this dask.distributed scheduler (e.g. "
                   "tcp://HOST:8786), one task per model, instead of local processes "
                   "(needs the cluster extra; the workers need this package and the "
                   "models' files at the same paths).")
@click.option("--engine", type=click.Choice(("auto", "dask", "pool")), default="auto",
              show_default=True,
              help="What runs --jobs N > 1 locally: a Dask LocalCluster of N workers "
                   "(dask; auto when the cluster extra is installed) or a process pool.")
@click.option("--shard", default=None, metavar="K/N",
              help="Run only the K-th of N disjoint parts of the models (CI matrices); "
                   "`zoo merge` joins the shards' report.json files into the report one run "
                   "gives.")
@click.option("--durations", "durations_report", default=None, metavar="REPORT.json",
              type=click.Path(dir_okay=False),
              help="With --shard: balance the shards by the models' durations in this "
                   "previous report (else model i goes to shard i mod N).")
@click.option("--model-timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              metavar="SECONDS",
              help="Time budget of each model: past it the model is killed and reported "
                   "as an error (reason timeout); the others go on.")
@click.option("--model-memory", default=None, metavar="SIZE",
              help="Memory budget of each model (address space, e.g. 4GiB): an allocation "
                   "past it fails that model only.")
@precision_option
@progress_option
@common_options
def zoo(manifests: tuple[str, ...], jobs: int, report_dir: str | None, backend: str,
        device: str, filters: tuple[str, ...], include_slow: bool, browser: bool,
        target: str | None, profiles: str | None, scheduler: str | None, engine: str,
        shard: str | None, durations_report: str | None, model_timeout: float | None,
        model_memory: str | None, precision: str, progress: bool | None,
        debug: bool, as_json: bool) -> None:
    """Convert and validate every model of the MANIFESTS and write the reports.

    Without MANIFESTS: the shipped manifests, zoo.toml and zoo_tflite.toml of
    converter/zoo/models (package data: an installed package has them too); the transformer
    zoo and the sweeps (models/ of the project's repository) are passed. With --precision
    float16 every model is converted to float16 weights and compute and validated under
    float16 tolerances (each entry's, at least the float16 defaults).

    `zoo merge REPORT.json... [--report DIR]` merges the report.json files of the shards of
    one run (--shard 1/N ... N/N) into the report that run gives unsharded.

    Engines: --scheduler ADDRESS runs each model as a task of that Dask cluster; else --jobs
    N > 1 starts a local Dask cluster of N workers (cluster extra), or a process pool (plain
    install, or --engine pool); --jobs 1 runs in this process. On Dask each model runs in a
    child of its worker: a crash or a model past --model-timeout / --model-memory fails that
    model with its reason, and a model whose worker died is started again elsewhere (its row
    says how many times)."""
    if manifests[:1] == ("merge",):
        _merge(manifests[1:], report_dir, debug, as_json)
        return
    with handled(debug, as_json):
        from converter.api import load_target
        from converter.zoo import (
            Budget,
            default_manifests,
            read_manifests,
            run_zoo,
            write_reports,
        )
        from converter.zoo import shards as sharding

        paths = [Path(m) for m in manifests] or default_manifests()
        part = _shard(shard, durations_report)
        budget = Budget(model_timeout, _size(model_memory))
        entries = read_manifests(paths, generate=False)  # generated models: when run
        if filters:
            entries = [e for e in entries if any(f.lower() in e.name.lower() for f in filters)]
        if not entries:
            raise CommandError("no model matches" + (f" --filter {' '.join(filters)}"
                                                     if filters else ""))
        order = tuple(e.name for e in entries)
        if part is not None:
            k, n = part
            past = sharding.durations(durations_report) if durations_report else None
            entries = sharding.select(entries, k, n, past)
        skip = {e.name: "slow entry, not run (use --include-slow, or --filter NAME)"
                for e in entries if e.slow and not include_slow and not filters}
        chosen = _profiles(profiles)
        if target is not None and target not in chosen:
            load_target(target)  # an unknown one is one error before anything runs
            chosen = (*chosen, target)
        options: dict[str, Any] = {"jobs": jobs, "backend": backend, "device": device,
                                   "skip": skip, "precision": precision, "profiles": chosen,
                                   "scheduler": scheduler, "engine": engine,
                                   "budget": budget}
        try:
            if not want_progress(progress, as_json):
                report = run_zoo(entries, **options)
            else:
                with click.progressbar(length=len(entries), label="zoo", file=sys.stderr,
                                       show_pos=True, item_show_func=lambda s: s) as bar:
                    report = run_zoo(entries, on_done=lambda name: bar.update(1, name),
                                     **options)
        except _engine_errors() as exc:
            raise CommandError(str(exc)) from None
        if part is not None:
            from dataclasses import replace

            report = replace(report, shard=f"{part[0]}/{part[1]}", order=order)
        if browser:
            report = _browser_pass(report, entries, want_progress(progress, as_json), target,
                                   precision)
        written = write_reports(report, Path(report_dir)) if report_dir else []
        if as_json:
            emit_json(report.to_dict())
        else:
            click.echo(report.to_text())
            if browser:
                from converter.zoo.report import browser_verdict

                width = max((len(r.name) for r in report.results), default=4)
                for r in report.results:
                    if browser_verdict(r):
                        click.echo(f"{r.name:<{width}}  real browser: {browser_verdict(r)}")
            for p in written:
                click.echo(f"wrote {p}")
        if not report.passed:
            raise click.exceptions.Exit(EXIT_FAIL)


def _merge(reports: tuple[str, ...], report_dir: str | None, debug: bool,
           as_json: bool) -> None:
    """`zoo merge REPORT.json...`: the shards' reports as one (`converter.zoo.shards`)."""
    with handled(debug, as_json):
        from converter.zoo import write_reports
        from converter.zoo.shards import merge, read_report

        if not reports:
            raise CommandError("zoo merge: give the shards' report.json files")
        report = merge([read_report(p) for p in reports], list(reports))
        written = write_reports(report, Path(report_dir)) if report_dir else []
        if as_json:
            emit_json(report.to_dict())
        else:
            click.echo(report.to_text())
            for p in written:
                click.echo(f"wrote {p}")
        if not report.passed:
            raise click.exceptions.Exit(EXIT_FAIL)


def _shard(text: str | None, durations: str | None) -> tuple[int, int] | None:
    if text is None:
        if durations is not None:
            raise CommandError("--durations balances --shard: give --shard K/N too")
        return None
    from converter.zoo.shards import parse_shard

    try:
        return parse_shard(text)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def _size(text: str | None) -> int | None:
    if text is None:
        return None
    from converter.api import parse_size

    try:
        return parse_size(text, "--model-memory")
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def _engine_errors() -> tuple[type[Exception], ...]:
    """The Dask engine's one-line errors (none without Dask)."""
    try:
        from converter.zoo.cluster import EngineError
    except ImportError:  # pragma: no cover - cluster.py imports nothing of Dask at the top
        return ()
    return (EngineError,)


def _profiles(text: str | None) -> tuple[str, ...]:
    """`--profiles`: the target names given (each loadable), 'all' standing for every
    built-in one (also among others: `all,LIMITS.json`), each name once."""
    if text is None:
        return ()
    from converter.api import known_targets, load_target

    given = [n.strip() for n in text.split(",") if n.strip()]
    names = list(dict.fromkeys(k for n in given for k in (known_targets() if n == "all"
                                                          else [n])))
    if not names:
        raise CommandError("--profiles: give target names separated by commas, or 'all'")
    for name in names:
        load_target(name)  # an unknown one is one error before anything runs
    return tuple(names)


def _browser_pass(report: Any, entries: Any, show: bool, target: str | None = None,
                  precision: str = "float32") -> Any:
    """Run every converted model (status pass / fail) once more in a real browser, one after
    the other in this process (one Chromium at a time, whatever --jobs is): converted with the
    entry's options for `target` (None: the default target) at `precision`, fed the same inputs,
    compared with the original framework under the row's tolerances (the entry's, widened for
    float16 as the row was). Each result gets a note "real browser:
    <verdict>" and the browser's comparisons as extra outputs named "<output> (browser)"; its
    status is unchanged."""
    from dataclasses import replace

    from converter.api import (
        BrowserUnavailable,
        check_in_browser,
        convert,
        detect_format,
        ensure_browser,
        make_inputs,
        run_source,
    )
    from converter.zoo import convert_options, entry_inputs, load_model
    from converter.zoo.report import BROWSER_NOTE

    ensure_browser()  # no browser: one error for the whole run
    by_name = {e.name: e for e in entries}
    results = []
    for r in report.results:
        entry = by_name.get(r.name)
        if r.status not in ("pass", "fail") or entry is None:
            results.append(r)
            continue
        if show:
            click.echo(f"zoo: {r.name} in the real browser", err=True)
        outputs: tuple[dict[str, Any], ...] = ()
        try:
            model = load_model(entry)
            fmt = detect_format(model)
            result = convert(model, fmt=fmt, target=target, precision=precision,
                             **convert_options(entry))
            feeds = make_inputs(result.source, seed=entry.seed,
                                overrides=entry_inputs(entry, result) or None)
            reference = run_source(fmt, model, result.source, feeds)
            check = check_in_browser(result, feeds, reference.outputs,
                                     rtol=r.rtol or entry.rtol, atol=r.atol or entry.atol)
            note = BROWSER_NOTE + f"{check.summary()} [{check.browser}, target " + (
                f"{result.report.target}") + (
                f", {precision}]" if precision != "float32" else "]")
            outputs = tuple(dict(c.to_dict(), name=f"{c.name} (browser)")
                            for c in check.outputs)
        except BrowserUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - one model's failure must not stop the zoo
            note = BROWSER_NOTE + f"error: {type(exc).__name__}: {exc}"
        results.append(replace(r, outputs=(*r.outputs, *outputs), notes=(*r.notes, note)))
    return replace(report, results=tuple(results))
