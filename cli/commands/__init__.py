"""One module per `webnn-convert` command; `COMMANDS` lists them in help order."""

from __future__ import annotations

from cli.commands.convert import convert
from cli.commands.inspect import inspect
from cli.commands.ops import ops
from cli.commands.run import run
from cli.commands.targets import targets
from cli.commands.validate import validate
from cli.commands.zoo import zoo

COMMANDS = (convert, inspect, validate, run, ops, zoo, targets)
