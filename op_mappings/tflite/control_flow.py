"""Control flow resolved at conversion time: WHILE, IF, CALL_ONCE, STABLEHLO_COMPOSITE.

WebNN graphs have no control flow, so subgraphs are converted inline
(`ctx.run_subgraph`, see `TFLiteFrontEnd.run_subgraph`); their nodes fold like any other node, which is what
makes trip counts and conditions known:
- WHILE: the condition subgraph is converted before every iteration; it must fold to a
  constant (a counter compared with a constant limit, as Keras RNN layers export). The body
  is unrolled while it is true, at most `max_trip_count` iterations (a budget of
  `converter.core.budgets`, default 4096; the conversion setting `max_while_iterations`
  overrides it), the nodes of its condition and body counting against the
  `max_unrolled_nodes` budget. Loop-carried values may be operands (the states an RNN
  carries).
- IF: a constant condition inlines the chosen branch. A condition computed from graph inputs
  converts both branches and selects each output with `where` (exact; the branches must
  produce the same shapes and data types and must not assign resource variables).
- CALL_ONCE: the init subgraph runs once per conversion (it initialises resource variables,
  see variables.py).
- STABLEHLO_COMPOSITE: the decomposition subgraph is inlined (`name`, `version` and the
  FlexBuffer attributes are informational).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import run_subgraph, state

MAX_WHILE_ITERATIONS = 4096
"""The default `max_trip_count` budget: the bound on unrolled WHILE iterations (the
conversion setting `max_while_iterations` overrides the budget)."""


def _values(ctx: ImportContext, node: Node, start: int = 0) -> list[Any]:
    out = []
    for i, name in enumerate(node.inputs[start:], start):
        if not name:
            raise InvalidModel(f"{node.op_type} input {i} is omitted (-1)")
        out.append(ctx.value(name))
    return out


def _known_bool(value: Any) -> bool | None:
    """The truth value of a condition known at conversion time, else None."""
    if isinstance(value, MLOperand):
        return None
    arr = np.asarray(value)
    if arr.size != 1:
        raise InvalidModel(f"condition has {arr.size} elements, expected 1")
    return bool(arr.reshape(-1)[0])


@tflite_op("WHILE", since=1, fold=False)
def while_loop(ctx: ImportContext, node: Node) -> Outputs:
    """Unrolled when the condition folds to a constant every iteration (static trip count,
    at most `max_trip_count` iterations, default 4096); otherwise an error naming the
    condition's dependency on graph inputs."""
    cond = int(node.attrs["cond_subgraph_index"])
    body = int(node.attrs["body_subgraph_index"])
    override = ctx.settings.get("max_while_iterations")
    unrolled = ctx.unrolling("the WHILE loop", None, 1,
                             max_trip=None if override is None else int(override))
    values = _values(ctx, node)
    if len(values) != len(node.outputs):
        raise InvalidModel(f"WHILE has {len(values)} inputs and {len(node.outputs)} outputs")
    iteration = 0
    while True:
        with unrolled:
            (flag,) = run_subgraph(ctx, cond, values, f"cond{iteration}")[:1] or [None]
        if flag is None:
            raise InvalidModel(f"WHILE condition subgraph {cond} has no output")
        known = _known_bool(flag)
        if known is None:
            raise UnsupportedAttribute(
                f"the WHILE condition (subgraph {cond}) depends on graph inputs at iteration "
                f"{iteration}; only loops with a trip count known at conversion time can be "
                "unrolled", hint="fix the inputs the trip count depends on, or export the model "
                "with a static loop")
        if not known:
            return values
        unrolled.step()
        with unrolled:
            out = run_subgraph(ctx, body, values, f"body{iteration}")
        if len(out) != len(values):
            raise InvalidModel(f"WHILE body subgraph {body} returns {len(out)} values for "
                               f"{len(values)} loop variables")
        values = out
        iteration += 1


def _snapshot(ctx: ImportContext) -> dict[str, int]:
    return {k: id(v) for k, v in state(ctx).variables.items()}


@tflite_op("IF", since=1, fold=False)
def if_then_else(ctx: ImportContext, node: Node) -> Outputs:
    """Constant condition: the chosen branch inlined. Otherwise both branches converted and
    selected with `where` (same output shapes/types required, no variable assignments)."""
    then_i = int(node.attrs["then_subgraph_index"])
    else_i = int(node.attrs["else_subgraph_index"])
    cond = ctx.value(node.inputs[0])
    args = _values(ctx, node, 1)
    known = _known_bool(cond)
    if known is not None:
        return run_subgraph(ctx, then_i if known else else_i, args, "then" if known else "else")
    assert isinstance(cond, MLOperand)
    if int(np.prod(cond.shape, dtype=np.int64)) != 1:
        raise InvalidModel(f"IF condition has shape {list(cond.shape)}, expected one element")
    before = _snapshot(ctx)
    then_out = run_subgraph(ctx, then_i, args, "then")
    else_out = run_subgraph(ctx, else_i, args, "else")
    if _snapshot(ctx) != before:
        raise UnsupportedAttribute("IF with a condition computed from graph inputs assigns "
                                   "resource variables in a branch; cannot select statically")
    if len(then_out) != len(else_out) or len(then_out) != len(node.outputs):
        raise InvalidModel(f"IF branches {then_i} and {else_i} return {len(then_out)} and "
                           f"{len(else_out)} values, the op has {len(node.outputs)} outputs")
    b = ctx.builder
    flag = b.reshape(cond, []) if cond.shape else cond
    results: list[Any] = []
    for k, (a, c) in enumerate(zip(then_out, else_out, strict=True)):
        if isinstance(a, np.ndarray) and isinstance(c, np.ndarray) and a.shape == c.shape \
                and a.dtype == c.dtype and np.array_equal(a, c, equal_nan=a.dtype.kind == "f"):
            results.append(a)
            continue
        av = a if isinstance(a, MLOperand) else ctx.constant(a)
        cv = c if isinstance(c, MLOperand) else ctx.constant(c)
        if list(av.shape) != list(cv.shape) or av.data_type != cv.data_type:
            raise UnsupportedAttribute(
                f"IF output {k}: the branches produce {av.data_type}{list(av.shape)} and "
                f"{cv.data_type}{list(cv.shape)}; a condition computed from graph inputs needs "
                "identical shapes and types")
        results.append(b.where(flag, av, cv))
    return results


@tflite_op("CALL_ONCE", since=1, fold=False)
def call_once(ctx: ImportContext, node: Node) -> Outputs:
    """Runs the init subgraph (no inputs, no outputs) once per conversion."""
    index = int(node.attrs["init_subgraph_index"])
    st = state(ctx)
    if index not in st.called_once:
        st.called_once.add(index)
        st.in_init += 1
        try:
            run_subgraph(ctx, index, [], "init")
        finally:
            st.in_init -= 1
    return []


@tflite_op("STABLEHLO_COMPOSITE", since=1, fold=False)
def stablehlo_composite(ctx: ImportContext, node: Node) -> Outputs:
    """Inlines the decomposition subgraph (inputs forwarded, its outputs returned)."""
    index = int(node.attrs["decomposition_subgraph_index"])
    out = run_subgraph(ctx, index, _values(ctx, node), str(node.attrs.get("name") or ""))
    if len(out) != len(node.outputs):
        raise InvalidModel(f"composite {node.attrs.get('name')!r}: decomposition subgraph "
                           f"{index} returns {len(out)} values, the op has "
                           f"{len(node.outputs)} outputs")
    return out
