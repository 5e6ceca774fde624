"""The memory one run of a WebNN graph needs, known before it runs, and its budgets.

Every operand of a built `MLGraph` has a static shape, so the bytes of every tensor a run
holds (the graph inputs, the constants, each operation's outputs) are known once the graph is
converted. `estimate(graph)` measures two amounts:

- the largest single tensor (`max_tensor_bytes`): the one allocation a backend cannot avoid
  and the amount a reference framework (onnxruntime, LiteRT) running the original model
  allocates for the same value. A 200-byte model whose Expand asks for a [2^31-1, 12]
  output is stopped here, before anything allocates its 96 GiB;
- the peak of a run (`max_run_bytes`): inputs and constants (held for the whole run) plus the
  largest sum of operation outputs alive at once when the operations run in the graph's
  topological order, each output alive from its operation to its last reader (graph outputs
  to the end). The reference backend frees values exactly so; other backends reuse buffers
  at least as well. It is an estimate: views (reshape) are counted as copies, and a
  backend's scratch memory (im2col, ...) is not counted.

`check_run_memory(graph, budgets)` raises `BudgetExceeded` (one line naming the tensor or the
operation at the peak, the amount, the budget and its flag) before anything executes the
graph: `converter.validate` calls it before the reference framework, our backends or the
browser run a model (and for the graph that keeps every intermediate value when it looks
for a divergence), `compile_graph` and `ConversionResult.compile` before a backend runs one (and
`ConversionResult.run` on every call, against the measured estimate), the
`run` command before it loads the inputs, and `MLContext.compute` / `dispatch` before every
run (the budgets active then; the importer's folds included). Restriction: operands of a graph built with
dynamic shapes do not exist here (WebNN shapes are static).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

from converter.core.budgets import Budgets, active, format_bytes, over_budget
from converter.core.webnn.dtypes import byte_length


@dataclass(frozen=True)
class RunMemory:
    """What one run of a graph holds (see the module docstring): the largest tensor's bytes
    and a description of it, the estimated peak and the operation it is reached at."""

    largest_bytes: int
    largest: str
    peak_bytes: int
    peak_at: str
    resident_bytes: int
    """Inputs and constants: held for the whole run."""


def operand_bytes(operand: Any) -> int:
    """Bytes of an operand's packed data as an exact Python int (no overflow for absurd
    shapes; 4-bit types two values per byte)."""
    count = 1
    for d in operand.shape:
        count *= max(int(d), 0)
    return byte_length(operand.data_type, count)


def _describe(operand: Any, position: int | None, total: int, output_names: dict[int, str]
              ) -> str:
    desc = f"{operand.data_type} {list(operand.shape)}"
    name = output_names.get(id(operand))
    if operand.kind == "input":
        return f"input {operand.name!r} ({desc})"
    if operand.kind == "constant":
        return f"a constant ({desc})"
    op = operand.operator
    where = f"operation #{position + 1} of {total}" if position is not None else "an operation"
    which = f"output {operand.index} of " if op is not None and len(op.outputs) > 1 else \
        "the output of "
    named = f", graph output {name!r}" if name is not None else ""
    return f"{which}{_op_text(op)} ({where}{named}; {desc})"


def _op_text(op: Any) -> str:
    """"expand", or "expand 'label'" when the builder was given a label."""
    if op is None:
        return "an operation"
    label = op.options.get("label")
    return f"{op.op} {label!r}" if label else str(op.op)


def estimate(graph: Any, *, keep_all: bool = False) -> RunMemory:
    """The `RunMemory` of one run of `graph` (an `MLGraph`): exact sizes, a linear walk.
    `keep_all`: every operation output is kept to the end of the run (as when every
    intermediate value is a graph output: the divergence search's tapped graph)."""
    operations = list(graph.operations)
    total = len(operations)
    output_names = {id(o): name for name, o in graph.outputs.items()}
    largest_bytes, largest = 0, "nothing"
    resident = 0
    for operand in (*graph.inputs.values(), *graph.constants):
        size = operand_bytes(operand)
        resident += size
        if size > largest_bytes:
            largest_bytes, largest = size, _describe(operand, None, total, output_names)
    last_use: dict[int, int] = {}
    for i, op in enumerate(operations):
        for operand in op.operand_inputs():
            if operand.kind == "output":
                last_use[id(operand)] = i
    keep = set(output_names)
    live, peak, peak_at = 0, 0, "no operation"
    pending: dict[int, list[int]] = {}
    for i, op in enumerate(operations):
        for out in op.outputs:
            size = operand_bytes(out)
            live += size
            if size > largest_bytes:
                largest_bytes, largest = size, _describe(out, i, total, output_names)
            if not keep_all and id(out) not in keep:
                pending.setdefault(last_use.get(id(out), i), []).append(size)
        if live > peak:
            peak, peak_at = live, f"{_op_text(op)}, operation #{i + 1} of {total}"
        live -= sum(pending.pop(i, ()))
    return RunMemory(largest_bytes, largest, resident + peak, peak_at, resident)


_ESTIMATES: weakref.WeakKeyDictionary[Any, RunMemory] = weakref.WeakKeyDictionary()
"""`estimate(graph)` of the graphs checked so far (a built graph never changes): a graph
computed many times is measured once."""


def _estimate(graph: Any, keep_all: bool) -> RunMemory:
    if keep_all:
        return estimate(graph, keep_all=True)
    try:
        cached = _ESTIMATES.get(graph)
    except TypeError:  # not weakly referenceable: measure every time
        return estimate(graph)
    if cached is None:
        cached = _ESTIMATES[graph] = estimate(graph)
    return cached


def check_run_memory(graph: Any, budgets: Budgets | None = None, *,
                     what: str = "running the graph", keep_all: bool = False) -> RunMemory:
    """`estimate(graph, keep_all=keep_all)`, raising `BudgetExceeded` when its largest
    tensor is over `max_tensor_bytes` or its peak over `max_run_bytes` of `budgets` (the
    active budgets when None). `what` starts the message ("running m.onnx"). The estimate
    of a graph is measured once (`MLContext.compute` / `dispatch` check every run)."""
    return check_budgets(_estimate(graph, keep_all), budgets, what=what)


def check_budgets(memory: RunMemory, budgets: Budgets | None = None, *,
                  what: str = "running the graph") -> RunMemory:
    """`memory` (a graph's `estimate`) checked against `budgets` (the active budgets when
    None) as `check_run_memory` checks it, without walking the graph: what a compiled
    session (`converter.results.compiled`) does on each run of `ConversionResult.run`."""
    b = budgets or active()
    if memory.largest_bytes > b.max_tensor_bytes:
        raise over_budget("max_tensor_bytes", memory.largest_bytes, b.max_tensor_bytes,
                          f"{what}: {memory.largest} would take")
    if memory.peak_bytes > b.max_run_bytes:
        raise over_budget("max_run_bytes", memory.peak_bytes, b.max_run_bytes,
                          f"{what}: the tensors alive at once at {memory.peak_at} "
                          f"({format_bytes(memory.resident_bytes)} of them inputs and "
                          "constants) would take")
    return memory
