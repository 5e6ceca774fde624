"""Resource variables: VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE.

A handle is folded to its key (`container/shared_name`, as LiteRT matches resources); the
variables live in the conversion's state, so a READ_VARIABLE returns the value most recently
assigned (by a CALL_ONCE init subgraph or earlier in the graph), as a constant or an operand.
A variable that carries state to the next invocation (the front end lists it in the
`carried_variables` setting: variable key -> graph input name; see
`converter.frontends.tflite.state`) reads that graph input until the invocation assigns it.
Restrictions: other values assigned by the graph are not carried to the next run (WebNN
graphs are stateless; a warning says so); reading a never-assigned variable is an error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import state


def _key(node: Node) -> str:
    return f"{node.attrs.get('container') or ''}/{node.attrs.get('shared_name') or ''}"


def _fold_handle(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any]:
    return [np.array(_key(node))]


@tflite_op("VAR_HANDLE", since=1, fold=_fold_handle)
def var_handle(ctx: ImportContext, node: Node) -> Outputs:
    """Folded to the handle's key."""
    return [np.array(_key(node))]


def _handle(ctx: ImportContext, node: Node) -> str:
    if not ctx.is_constant(node.inputs[0]):
        raise InvalidModel("resource handle is not produced by VAR_HANDLE")
    return str(np.asarray(ctx.const_value(node.inputs[0])).reshape(-1)[0])


def _carried(ctx: ImportContext) -> dict[str, str]:
    """The `carried_variables` setting: variable key -> state input name."""
    return dict(ctx.settings.get("carried_variables") or {})


@tflite_op("ASSIGN_VARIABLE", since=1, fold=False)
def assign_variable(ctx: ImportContext, node: Node) -> Outputs:
    """Stores the value for later READ_VARIABLEs of this conversion."""
    variables = state(ctx).variables
    key = _handle(ctx, node)
    value = ctx.value(node.inputs[1])
    if not state(ctx).in_init and key in _carried(ctx):
        state(ctx).assigned.add(key)
    elif not state(ctx).in_init:
        ctx.warn(f"variable {key!r} is updated by the graph; WebNN graphs are stateless, so "
                 "the update is not carried to the next run")
    variables[key] = value
    return []


@tflite_op("READ_VARIABLE", since=1, fold=False)
def read_variable(ctx: ImportContext, node: Node) -> Outputs:
    """The variable's current value (constant or operand)."""
    variables = state(ctx).variables
    key = _handle(ctx, node)
    carried = _carried(ctx)
    if key in carried and key not in state(ctx).assigned and not state(ctx).in_init:
        return [ctx.value(carried[key])]
    if key not in variables:
        raise InvalidModel(f"variable {key!r} is read before it is assigned")
    return [variables[key]]
