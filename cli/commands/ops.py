"""`webnn-convert ops`: the op support table generated from the mapping registries."""

from __future__ import annotations

import click

from cli.options import DEBUG_HELP, verbosity_options
from cli.output import EXIT_FAIL, CommandError, handled, plain
from cli.support_table import SOURCES
from converter.api import read_bounded

MAX_CHECKED_BYTES = 64 << 20
"""The largest file `ops --check` reads."""


@click.command()
@click.option("--source", type=click.Choice([*SOURCES, "all"]), default="all",
              show_default=True,
              help="Which registry's table: one source format, or all: every format's "
                   "table, one after the other.")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown",
              show_default=True, help="Markdown tables or one JSON document.")
@click.option("--check", "check_file", type=click.Path(dir_okay=False), default=None,
              help="Compare the table between the ops-table markers of this file with the "
                   "generated markdown; exit 1 when they differ.")
@click.option("--debug", is_flag=True, help=DEBUG_HELP)
@verbosity_options
def ops(source: str, fmt: str, check_file: str | None, debug: bool) -> None:
    """Print the op support table generated from the mapping registries (--source all:
    every source format's). With --check FILE, compare the table between FILE's ops-table
    markers with the generated one instead: exit 0 when they are equal, 1 with the diff
    when they differ."""
    with handled(debug, False):
        from cli.support_table import SOURCES, check_readme, render_json, render_markdown

        sources = SOURCES if source == "all" else (source,)
        if check_file is not None:
            try:
                text = read_bounded(check_file, MAX_CHECKED_BYTES, "the file to check"
                                    ).decode("utf-8")  # a regular file (converter.api.read_bounded)
            except OSError as exc:
                raise CommandError(plain(exc)) from None
            try:
                same, diff = check_readme(text, render_markdown(sources))
            except ValueError as exc:
                raise CommandError(f"{check_file}: {exc}") from None
            if not same:
                click.echo(diff)
                click.echo(f"error: {check_file}: the op table differs from the generated one "
                           "(regenerate it with `webnn-convert ops`)", err=True)
                raise click.exceptions.Exit(EXIT_FAIL)
            click.echo(f"{check_file}: op table is up to date")
            return
        text = render_json(sources) if fmt == "json" else render_markdown(sources)
        click.echo(text, nl=False)
