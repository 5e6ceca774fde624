"""One module per `webnn-convert` command; `COMMANDS` lists them in help order."""

from __future__ import annotations

from .convert import convert
from .inspect import inspect
from .ops import ops
from .run import run
from .targets import targets
from .validate import validate
from .zoo import zoo

COMMANDS = (convert, inspect, validate, run, ops, zoo, targets)
