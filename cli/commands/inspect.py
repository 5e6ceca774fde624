"""`webnn-convert inspect`: what a model holds, without converting it."""

from __future__ import annotations

import click

from cli.help import GroupedHelp
from cli.options import allow_root_option, budget_options, common_options
from cli.output import EXIT_BAD, echo_error, emit_json, given_budgets, handled
from converter.api import show


@click.command(cls=GroupedHelp, first=("signature",))
@click.argument("model", type=click.Path())
@click.option("--signature", default=None, metavar="KEY", help="TFLite SignatureDef.")
@budget_options("max_constant_bytes")
@allow_root_option
@common_options
def inspect(model: str, signature: str | None, allow_roots: tuple[str, ...], debug: bool,
            as_json: bool) -> None:
    """Show MODEL's inputs, outputs, free dimensions and op types with their support status,
    without writing anything. The status comes from the checks convert runs (a trial
    import, free dimensions at their suggested sizes or 1): an op type some of whose nodes
    convert refuses is listed unsupported with the reason. Exits 2 when an op type is
    unsupported."""
    with handled(debug, as_json):
        from converter.api import inspect_model, using_budgets

        with using_budgets(given_budgets()):  # sparse TFLite tensors are densified when read
            info = inspect_model(model, signature=signature, allow_roots=allow_roots)
        if as_json:
            emit_json(info.to_dict())
        else:
            click.echo(info.to_text("cli"))
        if info.unsupported:
            echo_error(f"{model}: unsupported op type(s): "
                       f"{', '.join(f'{show(o.key)} x{o.count}' for o in info.unsupported)}")
            raise click.exceptions.Exit(EXIT_BAD)
