"""`webnn-convert validate`: compare the converted graph with the original framework."""

from __future__ import annotations

import click

from cli.help import GroupedHelp
from cli.options import (
    BACKENDS,
    DEVICES,
    allow_root_option,
    budget_options,
    common_options,
    model_options,
    precision_option,
    progress_option,
    target_option,
    want_progress,
)
from cli.output import EXIT_FAIL, echo_error, emit_json, handled, progress_reporter
from cli.values import check_tolerance, conversion_kwargs, load_npz
from converter.api import quoted


@click.command(cls=GroupedHelp, first=("inputs_file", "backend", "device", "rtol", "atol", "dims",
                                       "shapes", "target", "precision"))
@click.argument("model", type=click.Path())
@click.option("--inputs", "inputs_file", type=click.Path(dir_okay=False), default=None,
              help=".npz of input arrays by name (overrides the generated ones).")
@click.option("--backend", type=click.Choice(BACKENDS), default="reference",
              show_default=True)
@click.option("--device", type=click.Choice(DEVICES), default="cpu", show_default=True)
@click.option("--rtol", type=float, default=None,
              help="Relative tolerance (times the output's max |ref|). Default: by the "
                   "converted graph's compute type: 1e-3 float32, 1e-2 float16, 2e-2 int8 / "
                   "int4 quantized (the report says which).")
@click.option("--atol", type=float, default=None,
              help="Absolute tolerance. Default: like --rtol.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the generated inputs.")
@click.option("--browser", is_flag=True,
              help="Also run the converted graph in a real headless Chromium with WebNN (its "
                   "JavaScript export: the module and the HTML page) and compare its outputs "
                   "too. Needs Node.js and npm; the browser is installed on first use into "
                   "~/.cache/webnn-converter/browser ($WEBNN_BROWSER_HOME).")
@click.option("--no-locate", is_flag=True,
              help="Do not search for the first diverging node when an output fails.")
@model_options
@budget_options("max_tensor_bytes", "max_run_bytes")
@target_option
@precision_option
@allow_root_option
@progress_option
@common_options
def validate(model: str, inputs_file: str | None, backend: str, device: str,
             rtol: float | None, atol: float | None, seed: int, browser: bool, no_locate: bool, dims: tuple[str, ...],
             free_dims: tuple[str, ...], shapes: tuple[str, ...], pins: tuple[str, ...],
             signature: str | None, target: str | None, precision: str, allow_roots: tuple[str, ...],
             progress: bool | None, debug: bool, as_json: bool) -> None:
    """Run MODEL in onnxruntime / LiteRT and the converted graph on a backend with the same
    seeded inputs and compare every output; on failure name the first diverging node."""
    say = progress_reporter(want_progress(progress, as_json))
    with handled(debug, as_json):
        from converter.api import validate as run_validation

        for flag, value in (("--rtol", rtol), ("--atol", atol)):
            if value is not None:
                check_tolerance(flag, value)
        kwargs = conversion_kwargs(dims, shapes, pins, signature, free_dims)
        overrides = load_npz(inputs_file) if inputs_file else None
        report = run_validation(model, **kwargs, inputs=overrides, seed=seed,
                                backend=backend, device=device, rtol=rtol, atol=atol,
                                browser=browser, target=target, precision=precision,
                                locate=not no_locate, progress=say, allow_roots=allow_roots)
        if as_json:
            emit_json(report.to_dict())
        else:
            click.echo(report.to_text())
        if report.browser is not None and not report.browser.passed:
            if not as_json:
                click.echo(f"error: {model}: in the real browser "
                           f"({report.browser.browser}): {report.browser.summary()}", err=True)
            if all(c.passed for c in report.outputs):
                raise click.exceptions.Exit(EXIT_FAIL)
        if not report.passed:
            if not as_json:
                failed = [c.name for c in report.outputs if not c.passed]
                where = (f"; {report.divergence.to_text()}" if report.divergence else "")
                if failed:
                    echo_error(f"{model}: output(s) {', '.join(map(quoted, failed))} outside "
                               f"tolerance{where}")
                else:  # every output matches: the rewritten graph is outside the limits
                    echo_error(f"{model}: the converted graph uses "
                               f"{len(report.target_violations)} operand(s) outside target "
                               f"{report.target}'s limits (listed above)")
            raise click.exceptions.Exit(EXIT_FAIL)
