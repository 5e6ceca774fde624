"""ONNX control flow: If, Loop, Scan, by inlining/unrolling at conversion time.

WebNN graphs have no control flow, so:
- If: a condition known at conversion time (a constant, folded, or pinned with `pin_inputs`)
  inlines the chosen branch. A data-dependent condition converts both branches and selects
  with `where`; this needs both branches to produce outputs of the same shapes and types.
- Loop: the trip count `M` must be known at conversion time (or omitted), and the loop
  condition must fold to a constant in every iteration; the body is unrolled. Scan outputs
  are stacked along axis 0. Zero iterations with scan outputs (empty tensors) are not
  representable.
- Scan (opset 9+): unrolled over the static scan-axis length, with `scan_input_axes`,
  `scan_input_directions`, `scan_output_axes` and `scan_output_directions`.
- Scan opset 8 (batch axis 0, scan axis 1, `directions`, optional `sequence_lens`): unrolled
  per batch entry and time step; `sequence_lens` must be known at conversion time; a batch
  entry with a shorter length runs fewer iterations and its scan outputs are padded with
  zeros to the maximum length (as onnxruntime does).
- Budgets (`converter.core.budgets`): iterations per loop (`max_trip_count`, default 4096; batch ·
  length for Scan-8) and source nodes converted in unrolled bodies, nested loops included
  (`max_unrolled_nodes`, default 65536 for the whole conversion), checked before unrolling
  and after each iteration; a trip count M >= 2**31 with a condition input (a while
  loop) counts only the iterations that run.
Subgraphs see the values of the enclosing scopes by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, RequiresConstantInput, UnsupportedAttribute
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from op_mappings._common.checks import finite_scalar, int_list
from op_mappings._common.values import norm_axis
from op_mappings.onnx import onnx_op

Value = Any  # np.ndarray | MLOperand

WHILE_LOOP_TRIP = 2**31
"""A Loop with a condition input and a trip count M at least this large is a while loop (the
exporters' idiom): only the iterations it runs count against the `max_trip_count` budget."""


def _scalar_bool(value: np.ndarray, what: str) -> bool:
    arr = np.asarray(value)
    if arr.size != 1:
        raise UnsupportedAttribute(f"{what} has {arr.size} elements, expected one")
    return bool(arr.reshape(-1)[0])


def _check_body(body: Any, what: str, inputs: int | None, outputs: int,
                exact: bool = True) -> None:
    """InvalidModel unless subgraph `body` (`what` names it) declares `inputs` inputs (None:
    any) and `outputs` outputs (at least that many when not `exact`)."""
    n_in, n_out = len(body.input), len(body.output)
    if inputs is not None and n_in != inputs:
        raise InvalidModel(f"{what} declares {n_in} input(s), {inputs} expected")
    if n_out < outputs or (exact and n_out != outputs):
        want = str(outputs) if exact else f"at least {outputs}"
        raise InvalidModel(f"{what} declares {n_out} output(s), {want} expected")


def _list_attr(node: Node, name: str, count: int, default: int = 0) -> list[int]:
    """Integer list attribute `name` with one entry per item (`count`; absent or empty: all
    `default`); InvalidModel when it has another length."""
    values = node.attrs.get(name, ()) or ()
    if not len(values):
        return [default] * count
    return int_list(values, f"attribute {name!r}", count)


def _as_operand(ctx: ImportContext, value: Value) -> MLOperand:
    return value if isinstance(value, MLOperand) else ctx.constant(value)


def _shape(value: Value) -> tuple[int, ...]:
    return tuple(int(d) for d in value.shape)


def _dtype(ctx: ImportContext, value: Value) -> str:
    if isinstance(value, MLOperand):
        return value.data_type
    from converter.core.webnn.dtypes import carrier_type

    name = np.asarray(value).dtype.name
    return carrier_type(name) or name


def _stack(ctx: ImportContext, values: Sequence[Value], axis: int, what: str) -> Value:
    """Stack per-iteration values along a new `axis` (numpy when all are constants)."""
    if not values:
        raise UnsupportedAttribute(f"{what}: zero iterations give an empty tensor, which WebNN "
                                   "cannot represent")
    shapes = {_shape(v) for v in values}
    if len(shapes) != 1:
        raise UnsupportedAttribute(f"{what}: iterations produce different shapes "
                                   f"{sorted(shapes)}")
    rank = len(values[0].shape) + 1
    axis = norm_axis(axis, rank, f"{what} axis")
    if all(not isinstance(v, MLOperand) for v in values):
        return np.stack([np.asarray(v) for v in values], axis=axis)
    parts = []
    for v in values:
        shape = list(_shape(v))
        parts.append(ctx.builder.reshape(_as_operand(ctx, v), shape[:axis] + [1] + shape[axis:]))
    return parts[0] if len(parts) == 1 else ctx.builder.concat(parts, axis)


def _take(ctx: ImportContext, value: Value, index: int, axis: int) -> Value:
    """value[..., index, ...] along `axis`, dropping the axis."""
    if not isinstance(value, MLOperand):
        return np.take(np.asarray(value), index, axis=axis)
    shape = list(_shape(value))
    starts = [0] * len(shape)
    starts[axis] = index
    sizes = list(shape)
    sizes[axis] = 1
    sliced = ctx.builder.slice(value, starts, sizes)
    return ctx.builder.reshape(sliced, shape[:axis] + shape[axis + 1:])


@onnx_op("If", since=1, fold=False)
def if_(ctx: ImportContext, node: Node) -> list[Value]:
    """If: the branch is chosen at conversion time when the condition is known; otherwise
    both branches are converted and `where` selects (same output shapes required)."""
    cond = node.input(0)
    for key in ("then_branch", "else_branch"):
        _check_body(node.attrs[key], key, None, len(node.outputs))
    if ctx.is_constant(cond):
        take_then = _scalar_bool(ctx.const_value(cond), "If condition")
        branch = node.attrs["then_branch" if take_then else "else_branch"]
        return ctx.run_subgraph(branch, [], "then" if take_then else "else")
    then_out = ctx.run_subgraph(node.attrs["then_branch"], [], "then")
    else_out = ctx.run_subgraph(node.attrs["else_branch"], [], "else")
    if len(then_out) != len(else_out):
        raise UnsupportedAttribute("If branches produce different numbers of outputs")
    cond_op = ctx.operand(cond)
    if int(np.prod(cond_op.shape, dtype=np.int64)) != 1:
        raise UnsupportedAttribute(f"If condition has shape {list(cond_op.shape)}, expected "
                                   "one element")
    out: list[Value] = []
    for i, (a, b) in enumerate(zip(then_out, else_out, strict=True)):
        if _shape(a) != _shape(b) or _dtype(ctx, a) != _dtype(ctx, b):
            raise UnsupportedAttribute(
                f"the If condition depends on graph inputs and output {i} differs between "
                f"the branches ({_dtype(ctx, a)} {list(_shape(a))} vs {_dtype(ctx, b)} "
                f"{list(_shape(b))}), so it cannot be a `where`",
                hint="pin the inputs the condition depends on (pin_inputs)")
        c = ctx.builder.reshape(cond_op, [1] * len(_shape(a))) if _shape(a) else \
            ctx.builder.reshape(cond_op, [])
        out.append(ctx.builder.where(c, _as_operand(ctx, a), _as_operand(ctx, b)))
    return out


@onnx_op("Loop", since=1, fold=False)
def loop(ctx: ImportContext, node: Node) -> list[Value]:
    """Loop: unrolled; the trip count must be known at conversion time (or omitted) and the
    condition must fold to a constant in every iteration; at most `max_trip_count`
    iterations (default 4096) and `max_unrolled_nodes` unrolled nodes (default 65536)."""
    body = node.attrs["body"]
    trip = node.input(0)
    if trip and not ctx.is_constant(trip):
        err = RequiresConstantInput("the Loop trip count M depends on graph inputs; only "
                                    "loops with trip counts known at conversion time are "
                                    "unrolled")
        err.value_name = trip
        raise err
    max_trip = int(finite_scalar(ctx, node, 0, "the trip count M")) if trip else None
    cond_name = node.input(1)
    if cond_name and not ctx.is_constant(cond_name):
        err = RequiresConstantInput("the Loop condition depends on graph inputs "
                                    "(data-dependent trip count)")
        err.value_name = cond_name
        raise err
    cond = _scalar_bool(ctx.const_value(cond_name), "Loop condition") if cond_name else True
    carried: Sequence[np.ndarray | MLOperand | None] = [ctx.value(n) if n else None
                                                        for n in node.inputs[2:]]
    n_carried = len(carried)
    _check_body(body, "the Loop body", 2 + n_carried, 1 + n_carried, exact=False)
    n_scan = len(body.output) - 1 - n_carried
    # M is checked in advance, except the "while loop" idiom of exporters (a condition
    # input with M >= 2**31, e.g. INT64_MAX), whose iterations are checked as they run
    endless = bool(cond_name) and max_trip is not None and max_trip >= WHILE_LOOP_TRIP
    unrolled = ctx.unrolling("the Loop", None if endless else max_trip, len(body.node))
    scans: list[list[Value]] = [[] for _ in range(n_scan)]
    i = 0
    while cond and (max_trip is None or i < max_trip):
        unrolled.step()
        with unrolled:
            outs = ctx.run_subgraph(body, [np.array(i, np.int64), np.array(cond), *carried],
                                    f"iter{i}")
        cond_out = outs[0]
        if isinstance(cond_out, MLOperand):
            raise RequiresConstantInput(f"the Loop condition computed in iteration {i} depends "
                                        "on graph inputs (data-dependent trip count)")
        cond = _scalar_bool(cond_out, "Loop condition")
        carried = outs[1:1 + n_carried]
        for k in range(n_scan):
            scans[k].append(outs[1 + n_carried + k])
        i += 1
    stacked = [_stack(ctx, s, 0, f"Loop scan output {k}") for k, s in enumerate(scans)]
    return [*carried, *stacked]


@onnx_op("Scan", since=9, fold=False)
def scan(ctx: ImportContext, node: Node) -> list[Value]:
    """Scan (opset 9+): unrolled over the scan axis (static length), at most
    `max_trip_count` iterations (default 4096) and `max_unrolled_nodes` unrolled nodes
    (default 65536); directions and axes as in ONNX."""
    body = node.attrs["body"]
    m = int(node.attrs["num_scan_inputs"])
    if not 1 <= m <= len(node.inputs):
        raise InvalidModel(f"num_scan_inputs is {m}, the node has {len(node.inputs)} input(s)")
    n_states = len(node.inputs) - m
    _check_body(body, "the Scan body", n_states + m, n_states, exact=False)
    states = [ctx.value(n) for n in node.inputs[:n_states]]
    scan_in = [ctx.value(n) for n in node.inputs[n_states:]]
    in_axes = _list_attr(node, "scan_input_axes", m)
    in_dirs = _list_attr(node, "scan_input_directions", m)
    k_out = len(body.output) - n_states
    out_axes = _list_attr(node, "scan_output_axes", k_out)
    out_dirs = _list_attr(node, "scan_output_directions", k_out)
    axes = [norm_axis(a, len(v.shape), "scan_input_axes") for a, v in zip(in_axes, scan_in,
                                                                         strict=True)]
    lengths = {int(v.shape[a]) for v, a in zip(scan_in, axes, strict=True)}
    if len(lengths) != 1:
        raise UnsupportedAttribute(f"scan inputs have different lengths {sorted(lengths)}")
    length = lengths.pop()
    unrolled = ctx.unrolling("the Scan", length, len(body.node))
    outs_per_iter: list[list[Value]] = [[] for _ in range(k_out)]
    for t in range(length):
        slices = [_take(ctx, v, length - 1 - t if d else t, a)
                  for v, a, d in zip(scan_in, axes, in_dirs, strict=True)]
        unrolled.step()
        with unrolled:
            outs = ctx.run_subgraph(body, [*states, *slices], f"iter{t}")
        states = outs[:n_states]
        for k in range(k_out):
            outs_per_iter[k].append(outs[n_states + k])
    stacked = []
    for k, values in enumerate(outs_per_iter):
        ordered = values[::-1] if out_dirs[k] else values
        stacked.append(_stack(ctx, ordered, out_axes[k], f"Scan output {k}"))
    return [*states, *stacked]


def _zeros_like(value: Value) -> np.ndarray:
    dtype = np.dtype(value.data_type) if isinstance(value, MLOperand) else np.asarray(value).dtype
    return np.zeros(_shape(value), dtype=dtype)


@onnx_op("Scan", since=8, fold=False)
def scan8(ctx: ImportContext, node: Node) -> list[Value]:
    """Scan: unrolled over the static scan length (at most `max_trip_count` iterations,
    default 4096, and `max_unrolled_nodes` unrolled nodes, default 65536).
    Opset 8: batch axis 0, scan axis 1, per batch entry; `sequence_lens` must be a constant
    (shorter sequences give zero-padded scan outputs). Opset 9+: directions and axes as in
    ONNX."""
    body = node.attrs["body"]
    m = int(node.attrs["num_scan_inputs"])
    if not 1 <= m <= len(node.inputs) - 1:
        raise InvalidModel(f"num_scan_inputs is {m}, the node has {len(node.inputs) - 1} "
                           "input(s) after sequence_lens")
    n_states = len(node.inputs) - 1 - m
    _check_body(body, "the Scan body", n_states + m, n_states, exact=False)
    states = [ctx.value(n) for n in node.inputs[1:1 + n_states]]
    scan_in = [ctx.value(n) for n in node.inputs[1 + n_states:]]
    dirs = list(node.attrs.get("directions", ()) or [0] * m)
    if len(dirs) != m:
        raise UnsupportedAttribute(f"directions has {len(dirs)} entries for {m} scan inputs")
    k_out = len(body.output) - n_states
    if not scan_in:
        raise UnsupportedAttribute("Scan without scan inputs")
    batches = {int(_shape(v)[0]) for v in [*states, *scan_in]}
    lengths = {int(_shape(v)[1]) for v in scan_in if len(_shape(v)) >= 2}
    if len(batches) != 1 or len(lengths) != 1 or any(len(_shape(v)) < 2 for v in scan_in):
        raise UnsupportedAttribute(f"Scan-8 inputs disagree on the batch size {sorted(batches)} "
                                   f"or the sequence length {sorted(lengths)}")
    batch, length = batches.pop(), lengths.pop()
    lens_name = node.input(0)
    if lens_name:
        if not ctx.is_constant(lens_name):
            err = RequiresConstantInput("Scan sequence_lens depends on graph inputs; only "
                                        "sequence lengths known at conversion time are "
                                        "unrolled")
            err.value_name = lens_name
            raise err
        seq_lens = [int(v) for v in np.asarray(ctx.const_value(lens_name)).reshape(-1)]
        if len(seq_lens) != batch or any(not 0 <= v <= length for v in seq_lens):
            raise UnsupportedAttribute(f"sequence_lens {seq_lens} does not fit batch {batch} "
                                       f"and maximum length {length}")
    else:
        seq_lens = [length] * batch
    unrolled = ctx.unrolling("the Scan", sum(seq_lens), len(body.node))
    final_states: list[list[Value]] = [[] for _ in range(n_states)]
    outputs: list[list[Value]] = [[] for _ in range(k_out)]
    for bi in range(batch):
        st = [_take(ctx, v, bi, 0) for v in states]
        seqs = [_take(ctx, v, bi, 0) for v in scan_in]
        per_iter: list[list[Value]] = [[] for _ in range(k_out)]
        n_iter = seq_lens[bi]
        for t in range(n_iter):
            slices = [_take(ctx, v, n_iter - 1 - t if d else t, 0)
                      for v, d in zip(seqs, dirs, strict=True)]
            unrolled.step()
            with unrolled:
                outs = ctx.run_subgraph(body, [*st, *slices], f"b{bi}_iter{t}")
            st = outs[:n_states]
            for k in range(k_out):
                per_iter[k].append(outs[n_states + k])
        for i, v in enumerate(st):
            final_states[i].append(v)
        for k in range(k_out):
            values = per_iter[k]
            if n_iter < length:
                if not values:
                    raise UnsupportedAttribute(
                        f"sequence_lens 0 for batch entry {bi}: the scan output element shape "
                        "is unknown without an iteration")
                values = values + [_zeros_like(values[0])] * (length - n_iter)
            outputs[k].append(_stack(ctx, values, 0, f"Scan output {k}"))
    return [*(_stack(ctx, v, 0, f"Scan final state {i}") for i, v in enumerate(final_states)),
            *(_stack(ctx, v, 0, f"Scan output {k}") for k, v in enumerate(outputs))]
