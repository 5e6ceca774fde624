"""`webnn-convert`: convert, inspect, validate and run models from the command line.

Commands: convert, inspect, validate, run, ops, zoo (see `webnn-convert COMMAND --help`).
Every command is a thin layer over the library (`converter.validate`, `converter.export`,
`converter.zoo`, the op_mappings registries).

Exit codes: 0 success; 1 validation failure (an output outside tolerance, a zoo model that
fails, a README table that differs from the generated one); 2 unsupported model or bad input
(missing/corrupt file, unsupported op, bad option value). Errors are one message on stderr
naming the file/node/op/rule; `--debug` adds the traceback; `--json` prints machine-readable
results (and errors as {"error": {...}}) on stdout. Progress goes to stderr.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from .commands import COMMANDS


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="webnn-converter", prog_name="webnn-convert")
def cli() -> None:
    """Convert ONNX and TFLite models to W3C WebNN graphs, run them, and check that they
    compute what the original model computes."""


for _command in COMMANDS:
    cli.add_command(_command)


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point (`webnn-convert`)."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="webnn-convert")


if __name__ == "__main__":  # pragma: no cover
    main()
