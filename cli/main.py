"""`webnn-convert`: convert, inspect, validate and run models from the command line.

Commands: convert, inspect, validate, run, ops, zoo (see `webnn-convert COMMAND --help`).
Every command is a thin layer over the library's public API (`converter.api`) and the zoo
runner (`converter.zoo`); shared options live in `cli.options`, the values they read in
`cli.values`.

Exit codes: 0 success; 1 validation failure (an output outside tolerance, a zoo model that
fails, a README table that differs from the generated one); 2 unsupported model or bad input
(missing/corrupt file, unsupported op, bad option value); 130 / 143 when interrupted by
SIGINT / SIGTERM (temporary output removed; at any moment of the process, start-up and the
way out included, under the console entry point `cli.entry`: see `cli.signals`). Errors are one line on stderr (`error: ...`,
names escaped and shortened) naming the file/node/op/rule; `--debug` adds the traceback;
`--json` prints machine-readable results (and errors as {"error": {...}}) on stdout.
Progress goes to stderr.
"""

from __future__ import annotations

import signal
from collections.abc import Sequence
from typing import Any

import click

from cli import signals
from cli.commands import COMMANDS
from cli.output import EXIT_BAD, echo_error, report_signal, stdout_may_close


class _UsageLine(click.ClickException):
    """A usage error (bad option value, unknown option or command) shown as one line."""

    exit_code = EXIT_BAD

    def __init__(self, error: click.UsageError) -> None:
        super().__init__(error.format_message())
        self.command_path = error.ctx.command_path if error.ctx is not None else None

    def show(self, file: Any = None) -> None:
        more = f" (see '{self.command_path} --help')" if self.command_path else ""
        echo_error(f"{self.format_message()}{more}")


class OneLineErrors(click.Group):
    """The group whose usage errors are one `error: ...` line (exit 2) and whose commands exit
    130 on an interruption that escaped them, without a traceback."""

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            raise _UsageLine(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:  # a signal raises only within (`cli.signals`): click's main never sees one
            return signals.raising_call(super().invoke, ctx)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            raise _UsageLine(exc) from None
        except KeyboardInterrupt:
            report_signal(signal.SIGINT, False)
        except SystemExit as exc:
            if exc.code == 128 + signal.SIGTERM:
                report_signal(signal.SIGTERM, False)
            raise


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="webnn-converter", prog_name="webnn-convert")
def cli() -> None:
    """Convert ONNX and TFLite models to W3C WebNN graphs, run them, and check that they
    compute what the original model computes."""


for _command in COMMANDS:
    cli.add_command(_command)


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point (`webnn-convert`). A reader that closes stdout early (`... |
    head -1`) ends the output quietly: the command still exits with its own status."""
    with stdout_may_close():
        cli.main(args=list(argv) if argv is not None else None, prog_name="webnn-convert")


if __name__ == "__main__":  # pragma: no cover - `python -m cli` is the console entry
    main()
