"""The options several commands share, as click decorators: the model options (--dim,
--free-dim, --shape, --pin, --signature, budgets), --allow-root, --target, --precision,
--backend / --device choices, --json / --debug / -q / -v and --progress. A command module
takes its options from here, never from another command."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import click

from cli.help import BudgetOption
from cli.output import BUDGETS_KEY, STARTED_KEY, VERBOSITY_KEY, verbosity
from converter.api import (
    BUDGET_SPECS,
    CONVERSION_BUDGETS,
    DEFAULT_BUDGETS,
    amount_text,
    parse_count,
    parse_size,
)

BACKENDS = ("reference", "onnxruntime", "torch")
DEVICES = ("cpu", "cuda")


def allow_root_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--allow-root DIR (repeatable): folders besides the model's own that files a model
    refers to (external data, weights, manifests) may lie in."""
    return click.option(
        "--allow-root", "allow_roots", multiple=True, metavar="DIR",
        type=click.Path(exists=True, file_okay=False),
        help="Also read files the model refers to (ONNX external data, weights, manifests) "
             "from DIR. By default only files inside the model's folder are read, symlinks "
             "resolved. Repeatable.")(fn)


def model_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    for deco in reversed([
        click.option("--dim", "dims", multiple=True, metavar="NAME=VALUE|INPUT:AXIS=VALUE",
                     help="Fix a named free dimension (ONNX dim_param), e.g. batch=1, or one "
                          "axis of an input (unnamed or TFLite -1 dimensions), e.g. x:0=1."),
        click.option("--free-dim", "free_dims", multiple=True, metavar="NAME=VALUE",
                     help="Fix a named free dimension, even one whose name looks like "
                          "INPUT:AXIS."),
        click.option("--shape", "shapes", multiple=True, metavar="INPUT=D1,D2,...",
                     help="Fix the whole shape of an input."),
        click.option("--pin", "pins", multiple=True, metavar="INPUT=VALUE",
                     help="Replace an ONNX input by a constant (number, list or @FILE.npy)."),
        click.option("--signature", default=None, metavar="KEY",
                     help="TFLite SignatureDef to convert (names become its aliases)."),
    ]):
        fn = deco(fn)
    return budget_options(*CONVERSION_BUDGETS)(fn)


def budget_options(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator adding one flag per named budget (`--max-constant-bytes SIZE`, ...). The
    values are not passed to the command: `given_budgets()` collects them."""
    def store(name: str) -> Callable[[click.Context, click.Parameter, Any], None]:
        spec = BUDGET_SPECS[name]

        def callback(ctx: click.Context, param: click.Parameter, value: Any) -> None:
            if value is None:
                return
            try:
                parsed = (parse_size if spec.is_bytes else parse_count)(value, spec.flag)
            except ValueError as exc:
                raise click.BadParameter(str(exc).removeprefix(f"{spec.flag}: "),
                                         param_hint=spec.flag) from None
            ctx.meta.setdefault(BUDGETS_KEY, {})[name] = parsed

        return callback

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        for name in reversed(names):
            spec = BUDGET_SPECS[name]
            default = amount_text(spec, int(getattr(DEFAULT_BUDGETS, name)))
            fn = click.option(spec.flag, cls=BudgetOption,
                              metavar="SIZE" if spec.is_bytes else "N",
                              default=None, expose_value=False, callback=store(name),
                              help=f"{spec.help[:1].upper()}{spec.help[1:]} [default: {default}"
                                   f"{'; e.g. 4GiB, 500MB' if spec.is_bytes else ''}].")(fn)
        return fn

    return decorate


DEBUG_HELP = ("Show the traceback of an error, and every Python warning (not only the "
              "notices).")
"""--debug as README describes it: tracebacks, and every warning instead of the notices."""


def common_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--json, --debug, -q/--quiet and -v/--verbose (`verbosity_options`)."""
    fn = click.option("--json", "as_json", is_flag=True,
                      help="Machine-readable JSON on stdout.")(fn)
    fn = click.option("--debug", is_flag=True, help=DEBUG_HELP)(fn)
    return verbosity_options(fn)


def verbosity_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """-q/--quiet (no progress, no warnings on stderr; errors still print) and -v/--verbose
    (progress on, with timings), one of them; kept in `click.Context.meta` (`verbosity()`),
    not passed to the command."""

    def store(level: int) -> Callable[[click.Context, click.Parameter, bool], None]:
        def callback(ctx: click.Context, param: click.Parameter, value: bool) -> None:
            ctx.meta.setdefault(STARTED_KEY, time.monotonic())  # for --verbose timings
            if not value:
                return
            if ctx.meta.get(VERBOSITY_KEY, level) != level:
                raise click.UsageError("-q/--quiet and -v/--verbose exclude each other",
                                       ctx=ctx)
            ctx.meta[VERBOSITY_KEY] = level

        return callback

    fn = click.option("-v", "--verbose", is_flag=True, expose_value=False,
                      callback=store(1),
                      help="More progress detail on stderr: every step with the seconds "
                           "since the start, node counts, the total time.")(fn)
    return click.option("-q", "--quiet", is_flag=True, expose_value=False, callback=store(-1),
                        help="Nothing on stderr but errors: no progress, no warnings.")(fn)


def progress_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--progress/--no-progress", default=None,
                        help="Progress messages on stderr (default: when it is a terminal; "
                             "on with -v, off with -q).")(fn)


def want_progress(flag: bool | None, as_json: bool = False) -> bool:
    """Off with -q/--quiet; else --progress/--no-progress when given; else on with
    -v/--verbose, or when stderr is a terminal and the output is not --json."""
    level = verbosity()
    if level < 0:
        return False
    if flag is not None:
        return flag
    if level > 0:
        return True
    if as_json:
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def target_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`--target NAME|LIMITS.json` of convert and validate (`convert(target=...)`)."""
    return click.option(
        "--target", "target", default=None, metavar="NAME|LIMITS.json",
        help="Convert for one WebNN implementation: rewrite the graph around its known "
             "deviations and the data types its opSupportLimits() lacks, where an exact "
             "rewrite exists (each rewrite is a report warning); convert refuses and "
             "validate fails on what the rewritten graph still uses outside the target's "
             "limits. [default: portable: what every built-in profile supports, so the "
             "graph builds in each]. NAME: spec (the unrestricted graph the WebNN spec "
             "allows, no rewrites), portable, "
             "chromium-tflite (Chromium's WebNN on the CPU, LiteRT), chromium-dml "
             "(DirectML), chromium-coreml (Core ML), listed by `webnn-convert targets`; "
             "or an opSupportLimits() JSON file (targets --from-browser): data types "
             "only, unless it equals a built-in target's limits (the browser that target "
             "describes), whose rules then apply too.")(fn)


def precision_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`--precision float32|float16` of convert, validate, run and zoo
    (`convert(precision=...)`, `converter.api.to_precision`)."""
    return click.option(
        "--precision", type=click.Choice(["float32", "float16"]), default="float32",
        show_default=True,
        help="float16: store the weights and compute in float16 (half the weights' bytes), "
             "keeping float32 inputs and outputs (cast at the graph's boundary); validation "
             "then uses float16 tolerances. float32: the graph as converted.")(fn)
