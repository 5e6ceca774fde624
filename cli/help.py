"""How a command's --help lists its options: the everyday ones first (in the order the
command names, then the rest as declared), and the budget flags (`cli.options.budget_options`,
one per `converter.api.BUDGET_SPECS` entry) after them under their own heading."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

BUDGET_HEADING = "Budget options (how much a model may ask for; defaults suit most models)"


class BudgetOption(click.Option):
    """A budget flag: listed under `BUDGET_HEADING` by `GroupedHelp`."""


class GroupedHelp(click.Command):
    """A command whose --help lists its options in two sections: "Options" (those named in
    `first`, in that order, then the others as declared) and the budget options
    (`BudgetOption`)."""

    def __init__(self, *args: Any, first: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.first = tuple(first)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        common: list[tuple[int, int, tuple[str, str]]] = []
        budgets: list[tuple[str, str]] = []
        for index, param in enumerate(self.get_params(ctx)):
            record = param.get_help_record(ctx) if isinstance(param, click.Option) else None
            if record is None:
                continue
            if isinstance(param, BudgetOption):
                budgets.append(record)
                continue
            rank = self.first.index(param.name) if param.name in self.first else len(
                self.first)
            common.append((rank, index, record))
        if common:
            with formatter.section("Options"):
                formatter.write_dl([record for _, _, record in sorted(common)])
        if budgets:
            with formatter.section(BUDGET_HEADING):
                formatter.write_dl(budgets)
