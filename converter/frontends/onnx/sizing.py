"""How much an ONNX model asks the converter to do, measured before anything is converted.

A file stays small while the work it asks for grows with every level of nesting: a tree of
If nodes, a function calling functions, a function calling itself. `size_model` walks the
model once (each graph and each model-local function body once; a function's size is
memoised) and counts the nodes a conversion would meet: the main graph's plus, for each
node, the nodes of its subgraphs (If branches both counted, Loop/Scan bodies once) and of
the model-local function body it would be inlined through, recursively. It stops at the
first of (`converter.core.budgets`):

- `max_nodes`: every node met, the main graph's included (a million-node file is refused
  right after parsing, without walking it when the main graph alone is over);
- `max_inlined_nodes`: the nodes inside subgraphs and function bodies;
- `max_nesting`: how deeply subgraphs and function bodies nest;
- a model-local function that calls itself, directly or through others: `InvalidModel`
  naming the chain (ONNX functions cannot recurse; inlining one would never end).

Walking costs one visit per node of the file; the walk itself stops as soon as the nodes it
visited inside subgraphs pass `max_inlined_nodes` (or all of them `max_nodes`), so a
refused model is refused after about that many visits. Restrictions: functions of the op
schemas (standard ops without a handler) are not counted (they are small and cannot
recurse); a function with a handler of its own is not inlined, so not counted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from converter.core.budgets import Budgets, active, over_budget
from converter.core.errors import BudgetExceeded, InvalidModel

Handled = Callable[[str, str, int], bool]
"""`handled(op_type, domain, version)`: whether a converter handler takes the op (so a
model-local function of that name is not inlined)."""


@dataclass(frozen=True)
class ModelSize:
    """What `size_model` counted: `nodes` (every node a conversion would meet), `inlined`
    (those inside subgraphs and function bodies, per inlining), `depth` (deepest nesting
    of subgraphs and function bodies; 0 for a flat graph) and `visited` (nodes walked:
    each node of the file once)."""

    nodes: int
    inlined: int
    depth: int
    visited: int


class _Over(Exception):
    """Internal: an inner count passed a budget (`name`, `amount`, `at_least`)."""

    def __init__(self, name: str, amount: int, at_least: bool) -> None:
        super().__init__(name)
        self.name = name
        self.amount = amount
        self.at_least = at_least


def _domain(domain: str) -> str:
    return "" if domain in ("", "ai.onnx") else domain


def _opsets(entries: Iterable[Any]) -> dict[str, int]:
    return {_domain(e.domain): int(e.version) for e in entries}


def default_handled(op_type: str, domain: str, version: int) -> bool:
    """Whether the ONNX op registry has a handler for the op."""
    from op_mappings.onnx import lookup

    return lookup(op_type, domain, version) is not None


class _Walk:
    def __init__(self, functions: Mapping[tuple[str, str], Any], budgets: Budgets,
                 handled: Handled) -> None:
        self.functions = functions
        self.budgets = budgets
        self.handled = handled
        self.memo: dict[tuple[str, str], tuple[int, int]] = {}
        self.chain: list[tuple[str, str]] = []
        self.visited = 0
        self.inner_visited = 0

    def nodes(self, nodes: Any, opsets: Mapping[str, int], depth: int) -> tuple[int, int]:
        """(expanded size, relative depth) of `nodes` at nesting `depth`."""
        total, deepest = 0, 0
        for node in nodes:
            size, rel = self.node(node, opsets, depth)
            total += size
            deepest = max(deepest, rel)
            if depth and total > self.budgets.max_inlined_nodes:
                raise _Over("max_inlined_nodes", total, True)
        return total, deepest

    def node(self, node: Any, opsets: Mapping[str, int], depth: int) -> tuple[int, int]:
        """(1 + the nodes it inlines, how many levels it nests below itself)."""
        import onnx

        self.visited += 1
        if self.visited > self.budgets.max_nodes:
            raise _Over("max_nodes", self.visited, True)
        if depth:
            self.inner_visited += 1
            if self.inner_visited > self.budgets.max_inlined_nodes:
                raise _Over("max_inlined_nodes", self.inner_visited, True)
        size, rel = 1, 0
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                graphs = [attr.g]
            elif attr.type == onnx.AttributeProto.GRAPHS:
                graphs = list(attr.graphs)
            else:
                continue
            for g in graphs:
                self._nest(depth)
                inner, inner_rel = self.nodes(g.node, opsets, depth + 1)
                size += inner
                rel = max(rel, inner_rel + 1)
        domain = _domain(node.domain)
        key = (domain, node.op_type)
        fn = self.functions.get(key)
        if fn is not None and not self.handled(node.op_type, domain,
                                               int(opsets.get(domain, 0))):
            self._nest(depth)
            body, body_rel = self.function(key, fn, opsets, depth + 1)
            size += body
            rel = max(rel, body_rel + 1)
        if depth + rel > self.budgets.max_nesting:
            raise _Over("max_nesting", depth + rel, False)
        return size, rel

    def function(self, key: tuple[str, str], fn: Any, opsets: Mapping[str, int],
                 depth: int) -> tuple[int, int]:
        if key in self.memo:
            return self.memo[key]
        if key in self.chain:
            loop = [*self.chain[self.chain.index(key):], key]
            names = " -> ".join(f"{d}::{n}" if d else n for d, n in loop)
            raise InvalidModel(f"model-local function {names.split(' -> ')[0]!r} calls "
                               f"itself ({names}): recursive functions cannot be inlined")
        self.chain.append(key)
        try:
            result = self.nodes(fn.node, {**opsets, **_opsets(fn.opset_import)}, depth)
        finally:
            self.chain.pop()
        self.memo[key] = result
        return result

    def _nest(self, depth: int) -> None:
        if depth + 1 > self.budgets.max_nesting:
            raise _Over("max_nesting", depth + 1, False)


def size_model(proto: Any, label: str, budgets: Budgets | None = None,
               handled: Handled | None = None) -> ModelSize:
    """Count what converting `proto` (an `onnx.ModelProto`) would meet and refuse it when
    over a budget (`BudgetExceeded` naming the top-level node whose subgraphs or function
    bodies are too large or too deep, or the model for `max_nodes`) or when a model-local
    function calls itself (`InvalidModel`). `label` names the model in messages."""
    b = budgets or active()
    graph = proto.graph
    if len(graph.node) > b.max_nodes:  # refused without walking it
        raise over_budget("max_nodes", len(graph.node), int(b.max_nodes),
                          f"{label}: the main graph has")
    functions = {(_domain(f.domain), f.name): f for f in proto.functions}
    walk = _Walk(functions, b, handled or default_handled)
    opsets = _opsets(proto.opset_import)
    total = inlined = deepest = 0
    for node in graph.node:
        try:
            size, rel = walk.node(node, opsets, 0)
        except _Over as over:
            raise _refusal(over, node, opsets, label, b) from None
        total += size
        inlined += size - 1
        deepest = max(deepest, rel)
        if inlined > b.max_inlined_nodes:
            raise _refusal(_Over("max_inlined_nodes", inlined, False), node, opsets, label, b)
        if total > b.max_nodes:
            raise over_budget("max_nodes", total, int(b.max_nodes),
                              f"{label}: with its subgraphs and function bodies inlined, "
                              "the model would convert")
    return ModelSize(total, inlined, deepest, walk.visited)


def _refusal(over: _Over, node: Any, opsets: Mapping[str, int], label: str, b: Budgets
             ) -> BudgetExceeded:
    amount = over.amount
    least = "at least " if over.at_least else ""
    if over.name == "max_nodes":
        return over_budget("max_nodes", amount, int(b.max_nodes),
                           f"{label}: with its subgraphs and function bodies inlined, the "
                           f"model would convert {least}".rstrip())
    if over.name == "max_nesting":
        subject = "its subgraphs and function bodies would nest"
    else:
        subject = f"its subgraphs and function bodies would inline {least}".rstrip()
    err = over_budget(over.name, amount, int(getattr(b, over.name)), subject)
    domain = _domain(node.domain)
    err.with_node(node_name=node.name or node.op_type, op_type=node.op_type, domain=domain,
                  version=int(opsets.get(domain, 0)))
    return err
