"""How much a TFLite model asks the converter to do, measured before anything is converted
(the TFLite side of `converter.frontends.onnx.sizing`).

Control-flow operators (IF, WHILE, CALL_ONCE, STABLEHLO_COMPOSITE) inline the subgraphs
their `*_subgraph_index` options name, and those subgraphs may hold control flow again: a
small file can describe a tree of subgraphs whose inlined size doubles per level.
`size_tflite` walks the model once (a subgraph's size is memoised) and counts the operators
a conversion would meet: the main subgraph's plus, for each operator, the operators of the
subgraphs it inlines (both IF branches; WHILE's condition and body once: unrolling is
`max_unrolled_nodes`), recursively. It stops at the first of `max_nodes`,
`max_inlined_nodes` and `max_nesting` (`converter.core.budgets`), and refuses a subgraph that
refers back to itself (`InvalidModel` naming the chain of subgraph indices). Restriction:
an index outside the model is left to the importer, which names it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from converter.core.budgets import Budgets, active, over_budget
from converter.core.errors import BudgetExceeded, InvalidModel


def _refs(node: Any, count: int) -> list[int]:
    """The subgraph indices `node` inlines (those inside the model)."""
    out = []
    for key, value in (getattr(node, "attrs", None) or {}).items():
        if str(key).endswith("_subgraph_index") and isinstance(value, int) \
                and not isinstance(value, bool) and 0 <= value < count:
            out.append(value)
    return out


class _Over(Exception):
    def __init__(self, name: str, amount: int) -> None:
        super().__init__(name)
        self.name, self.amount = name, amount


def size_tflite(nodes: Sequence[Any], subgraphs: Sequence[Any], label: str,
                budgets: Budgets | None = None) -> int:
    """Check the operators a conversion of the main subgraph's `nodes` would meet (the
    model's `subgraphs` inlined by its control flow) against the budgets; returns the count.
    `BudgetExceeded` names the top-level operator whose subgraphs are too large or too
    deep (or the model, for `max_nodes`); `InvalidModel` for a subgraph that refers back to
    itself."""
    b = budgets or active()
    if len(nodes) > b.max_nodes:
        raise over_budget("max_nodes", len(nodes), int(b.max_nodes),
                          f"{label}: the main subgraph has")
    memo: dict[int, tuple[int, int]] = {}
    chain: list[int] = []

    def subgraph(index: int, depth: int) -> tuple[int, int]:
        """(operators inlined with `index`, levels below it)."""
        if index in memo:
            size, rel = memo[index]
        else:
            if index in chain:
                loop = " -> ".join(str(i) for i in [*chain[chain.index(index):], index])
                raise InvalidModel(f"{label}: subgraph {index} inlines itself through control "
                                   f"flow (subgraphs {loop}): recursion cannot be inlined")
            chain.append(index)
            try:
                size, rel = 0, 0
                for inner in subgraphs[index].nodes:
                    s, r = operator(inner, depth)
                    size += s
                    rel = max(rel, r)
                    if size > b.max_inlined_nodes:
                        raise _Over("max_inlined_nodes", size)
            finally:
                chain.pop()
            memo[index] = (size, rel)
        if depth + rel > b.max_nesting:
            raise _Over("max_nesting", depth + rel)
        return size, rel

    def operator(node: Any, depth: int) -> tuple[int, int]:
        size, rel = 1, 0
        for index in _refs(node, len(subgraphs)):
            if depth + 1 > b.max_nesting:
                raise _Over("max_nesting", depth + 1)
            inner, inner_rel = subgraph(index, depth + 1)
            size += inner
            rel = max(rel, inner_rel + 1)
        return size, rel

    total = inlined = 0
    for node in nodes:
        try:
            size, _ = operator(node, 0)
        except _Over as over:
            raise _refusal(over, node, b) from None
        total += size
        inlined += size - 1
        if inlined > b.max_inlined_nodes:
            raise _refusal(_Over("max_inlined_nodes", inlined), node, b)
        if total > b.max_nodes:
            raise over_budget("max_nodes", total, int(b.max_nodes),
                              f"{label}: with its subgraphs inlined, the model would convert")
    return total


def _refusal(over: _Over, node: Any, b: Budgets) -> BudgetExceeded:
    verb = "nest" if over.name == "max_nesting" else "inline at least"
    err = over_budget(over.name, over.amount, int(getattr(b, over.name)),
                      f"the subgraphs it inlines would {verb}")
    err.with_node(node_name=getattr(node, "name", None), op_type=getattr(node, "op_type", None),
                  domain=None, version=getattr(node, "version", None))
    return err
