"""Whether a built WebNN graph stays inside a target's `opSupportLimits()`.

`check_graph(graph, target)` walks the graph (after lowering, `converter.passes.targets.passes.lower`)
and returns one `Violation` per thing the target's limits lack:

- `op`: an operation the limits do not list at all;
- `dtype` / `rank`: an operand of an operation (each operand role: `input`, `indices`,
  `filter`, ..., and each output role: `output`, `outputs`, `output0`, ...) whose data type is
  not in that role's `dataTypes`, or whose rank is outside its `rankRange`;
- `input` / `constant` / `output`: a graph input, constant or output whose data type or rank
  the top-level `input` / `constant` / `output` limits lack;
- `size`: an operand larger than `maxTensorByteLength`.

`Violation.line()` is one line naming the target, op, role, data type and the operand and
operation, e.g. `chromium-coreml lacks gatherElements indices int64 (operand 'idx',
operation #3 gatherElements)`. `format_violations` folds a list into one line.

Restrictions: a target without limits (an empty mapping) accepts everything; a role the
target's limits do not list for an op it lists is not checked (Chromium lists every role it
checks). Operands are named by their graph input or output name, else by the operation that
makes them; operations by their position in the graph's topological order (source node
names do not survive lowering).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from converter.core.webnn import MLGraph, MLOperand
from converter.core.webnn.operand import Operation
from converter.passes.targets.roles import data_types, operand_roles, output_role, rank_range

TOP_LEVEL = ("input", "constant", "output", "preferredInputLayout", "maxTensorByteLength")
"""Keys of `opSupportLimits()` that are not operators."""


class HasLimits(Protocol):
    """What `check_graph` reads of a target (`converter.passes.targets.Target`: give
    `load_target(name)`)."""

    @property
    def name(self) -> str: ...

    @property
    def limits(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class Violation:
    """One thing `target` lacks. `kind` is op, dtype, rank, input, constant, output or size;
    `op`/`role` are empty for graph-level kinds; `operand` names the operand, `node` the
    operation ('' for graph-level kinds); `allowed` says what the target takes."""

    target: str
    kind: str
    op: str
    role: str
    data_type: str
    rank: int
    operand: str
    node: str
    allowed: str

    def line(self) -> str:
        where = f"operand {self.operand!r}" + (f", {self.node}" if self.node else "")
        if self.kind == "op":
            return f"{self.target} lacks operator {self.op} ({self.node})"
        if self.kind in ("input", "constant", "output"):
            what = f"graph {self.kind} {self.data_type}"
        elif self.kind == "size":
            what = f"{self.op} {self.role} of {self.allowed}"
            return f"{self.target} lacks tensors that large: {what} ({where})"
        else:
            what = f"{self.op} {self.role} {self.data_type}"
        if self.kind == "rank" or (self.kind in ("input", "constant", "output")
                                   and self.allowed.startswith("rank")):
            what += f" of rank {self.rank}"
        return f"{self.target} lacks {what} ({where}; it takes {self.allowed})"


class _Names:
    """Names for operands and operations in messages."""

    def __init__(self, graph: MLGraph) -> None:
        self.index = {id(op): i for i, op in enumerate(graph.operations)}
        self.outputs = {id(o): name for name, o in graph.outputs.items()}
        self.constants = {id(c): i for i, c in enumerate(graph.constants)}

    def node(self, operation: Operation) -> str:
        return f"operation #{self.index.get(id(operation), -1)} {operation.op}"

    def operand(self, operand: MLOperand) -> str:
        if operand.kind == "input" and operand.name:
            return operand.name
        if id(operand) in self.outputs:
            return self.outputs[id(operand)]
        if operand.kind == "constant":
            return f"constant #{self.constants.get(id(operand), -1)}"
        if operand.operator is not None:
            suffix = f":{operand.index}" if len(operand.operator.outputs) > 1 else ""
            return f"{self.node(operand.operator)}{suffix}"
        return "?"


def _allowed(types: tuple[str, ...] | None, ranks: tuple[int, int] | None) -> str:
    parts = []
    if types is not None:
        parts.append(", ".join(types) if types else "no data type")
    if ranks is not None:
        parts.append(f"rank {ranks[0]}..{ranks[1]}")
    return "; ".join(parts)


def check_graph(graph: MLGraph, target: HasLimits) -> list[Violation]:
    """Every operation, operand and graph input/constant/output of `graph` that `target`'s
    `opSupportLimits()` lacks, in graph order (see the module docstring). `target` is a
    loaded target (`converter.passes.targets.load_target`)."""
    t = target
    limits = t.limits
    if not limits:
        return []
    names = _Names(graph)
    out: list[Violation] = []
    max_bytes = limits.get("maxTensorByteLength")

    def tensor(kind: str, op: str, role: str, operand: MLOperand, entry: Any, node: str
               ) -> None:
        if isinstance(max_bytes, int) and operand.descriptor.byte_length > max_bytes:
            out.append(Violation(t.name, "size", op or kind, role or "tensor",
                                 operand.data_type, operand.rank, names.operand(operand), node,
                                 f"{operand.descriptor.byte_length} bytes > {max_bytes}"))
        if not isinstance(entry, Mapping):
            return
        types, ranks = data_types(entry), rank_range(entry)
        allowed = _allowed(types, ranks)
        if types is not None and operand.data_type not in types:
            out.append(Violation(t.name, "dtype" if op else kind, op, role, operand.data_type,
                                 operand.rank, names.operand(operand), node, allowed))
        elif ranks is not None and not ranks[0] <= operand.rank <= ranks[1]:
            out.append(Violation(t.name, "rank" if op else kind, op, role, operand.data_type,
                                 operand.rank, names.operand(operand), node, allowed))

    for operand in graph.inputs.values():
        tensor("input", "", "", operand, limits.get("input"), "")
    for operand in graph.constants:
        tensor("constant", "", "", operand, limits.get("constant"), "")
    for operation in graph.operations:
        node = names.node(operation)
        entry = limits.get(operation.op)
        if operation.op in TOP_LEVEL or not isinstance(entry, Mapping):
            out.append(Violation(t.name, "op", operation.op, "", "", 0, "", node,
                                 "no such operator"))
            continue
        for role, operand in operand_roles(operation):
            tensor("", operation.op, role, operand, entry.get(role), node)
        for i, result in enumerate(operation.outputs):
            role = output_role(entry, i)
            tensor("", operation.op, role, result, entry.get(role), node)
    for operand in graph.outputs.values():
        tensor("output", "", "", operand, limits.get("output"), "")
    return out


def format_violations(violations: Sequence[Violation], limit: int = 1) -> str:
    """One line: the first `limit` violations' lines, then how many more there are and of
    how many distinct (op, role, data type) kinds."""
    if not violations:
        return ""
    shown = "; ".join(v.line() for v in violations[:limit])
    rest = len(violations) - limit
    if rest <= 0:
        return shown
    kinds = {(v.kind, v.op, v.role, v.data_type) for v in violations[limit:]}
    return f"{shown}; and {rest} more ({len(kinds)} distinct)"


def summary(violations: Sequence[Violation]) -> list[str]:
    """The distinct things lacked, one short phrase each ('gatherElements indices int64'),
    in first-seen order: what a report column shows."""
    seen: dict[str, None] = {}
    for v in violations:
        if v.kind == "op":
            seen[f"{v.op} (operator)"] = None
        elif v.kind in ("input", "constant", "output"):
            seen[f"graph {v.kind} {v.data_type}"] = None
        elif v.kind == "size":
            seen[f"{v.op} {v.role} size"] = None
        else:
            seen[f"{v.op} {v.role} {v.data_type}"
                 + (f" rank {v.rank}" if v.kind == "rank" else "")] = None
    return list(seen)



def limit_notes(violations: Sequence[Violation]) -> list[str]:
    """Report notes for `violations`: one per thing lacked (`summary`), the line of its
    first violation (`Violation.line`) with how many more there are like it."""
    lacks: dict[str, list[str]] = {}
    for v in violations:
        lacks.setdefault(summary([v])[0], []).append(v.line())
    return [lines[0] + (f" [and {len(lines) - 1} more like it]" if len(lines) > 1 else "")
            for lines in lacks.values()]


__all__ = ["Violation", "check_graph", "format_violations", "limit_notes", "summary"]
