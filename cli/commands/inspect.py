"""`webnn-convert inspect`: what a model holds, without converting it."""

from __future__ import annotations

import click

from ..common import (
    EXIT_BAD,
    common_options,
    emit_json,
    handled,
)


@click.command()
@click.argument("model", type=click.Path())
@click.option("--signature", default=None, metavar="KEY", help="TFLite SignatureDef.")
@common_options
def inspect(model: str, signature: str | None, debug: bool, as_json: bool) -> None:
    """Show MODEL's inputs, outputs, free dimensions and op types with their support status,
    without converting it. Exits 2 when an op type is unsupported."""
    with handled(debug, as_json):
        from converter.validate.inspect import inspect_model

        info = inspect_model(model, signature=signature)
        if as_json:
            emit_json(info.to_dict())
        else:
            click.echo(info.to_text("cli"))
        if info.unsupported:
            click.echo(f"error: {model}: unsupported op type(s): "
                       f"{', '.join(o.key for o in info.unsupported)}", err=True)
            raise click.exceptions.Exit(EXIT_BAD)
