"""Shape/control inputs: graph inputs whose values only decide shapes, sizes or control flow
(silero-vad's `sr` choosing a branch, a `shape` input feeding Reshape, a trip count). WebNN
graphs have static shapes and no control flow, so such inputs must be pinned to constants
(`pin_inputs` / `--pin`); this module finds them so that `inspect` and conversion errors can
say so.

The analysis is a backward pass over one graph's nodes (topological order). A use of a
value is a *control use* when it sits in a slot that must be known at conversion time (the
front end's `slots(node)`: the handler's `const_inputs` plus control-flow conditions and trip
counts); a value is *control-only* when every use of it is a control use or a use by a node
all of whose live outputs are control-only (so `Equal(sr, 16000) -> If` makes `sr`
control-only). Graph outputs, values read inside subgraph bodies (`captures`) and values
without uses are never control-only; uses by `shape_ops` (which read only a shape, e.g.
Shape) are not control uses.

A suggested pin value is a constant the input is compared with (`compare_ops`, the other
operand a scalar constant), else none (a placeholder).

Restrictions: bodies of If/Loop/Scan (and TFLite subgraphs) are not analysed: a value read
inside one counts as data; only direct comparisons with a scalar constant give a suggested
value.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from converter.core.fixes import Fix


@dataclass(frozen=True)
class GraphNode:
    """A node as the analysis sees it: `captures` are the outer values its subgraph bodies
    read (data uses)."""

    name: str
    op_type: str
    domain: str
    version: int
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    captures: tuple[str, ...] = ()


@dataclass(frozen=True)
class ControlInput:
    """A graph input that only steers shapes, sizes or control flow. `reaches` names the op
    types whose conversion-time slots it reaches (e.g. ("If",)); `compared_with` the scalar
    constants it is compared with (the first one is the suggested pin value)."""

    name: str
    reaches: tuple[str, ...]
    compared_with: tuple[Any, ...] = ()

    @property
    def fix(self) -> Fix:
        """`pin_inputs` fix with the suggested value (a placeholder when there is none)."""
        return Fix("pin_inputs", self.name,
                   value=self.compared_with[0] if self.compared_with else None)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "reaches": list(self.reaches),
                "compared_with": list(self.compared_with), "fix": self.fix.to_dict()}


@dataclass(frozen=True)
class GraphView:
    """One graph for the analysis: its nodes in topological order, input and output names,
    the front end's rules (`slots(node)` -> input positions known at conversion time;
    `shape_ops`, `compare_ops` op types) and `constant(name)` -> the value of a constant
    (None when the value is not a constant)."""

    nodes: Sequence[GraphNode]
    inputs: Sequence[str]
    outputs: Sequence[str]
    slots: Callable[[GraphNode], Collection[int]]
    shape_ops: Collection[str] = ()
    compare_ops: Collection[str] = ()
    constant: Callable[[str], np.ndarray | None] = lambda _name: None

    def control_inputs(self) -> tuple[ControlInput, ...]:
        """The graph inputs whose every use is (transitively) a control use, in input
        order."""
        consumers: dict[str, list[tuple[int, int]]] = {}
        captured: set[str] = set()
        for k, node in enumerate(self.nodes):
            for i, name in enumerate(node.inputs):
                if name:
                    consumers.setdefault(name, []).append((k, i))
            captured.update(node.captures)
        outputs = set(self.outputs)
        slots = [frozenset(self.slots(n)) for n in self.nodes]
        control: dict[str, bool] = {}
        reaches: dict[str, set[str]] = {}

        def live(name: str) -> bool:
            return bool(name) and (name in outputs or name in captured or name in consumers)

        def decide(name: str) -> bool:
            uses = consumers.get(name)
            if not uses or name in outputs or name in captured:
                return False
            found: set[str] = set()
            for k, i in uses:
                node = self.nodes[k]
                if node.op_type in self.shape_ops:
                    return False
                if i in slots[k]:
                    found.add(node.op_type)
                    continue
                outs = [o for o in node.outputs if live(o)]
                if not outs or not all(control.get(o, False) for o in outs):
                    return False
                for o in outs:
                    found |= reaches.get(o, set())
            reaches[name] = found
            return True

        for node in reversed(self.nodes):
            for name in node.outputs:
                if name and name not in control:
                    control[name] = decide(name)
        out = []
        for name in self.inputs:
            if decide(name):
                out.append(ControlInput(name, tuple(sorted(reaches[name])),
                                        self._compared(name)))
        return tuple(out)

    def _compared(self, name: str) -> tuple[Any, ...]:
        values: list[Any] = []
        for node in self.nodes:
            if node.op_type not in self.compare_ops or name not in node.inputs:
                continue
            for other in node.inputs:
                if not other or other == name:
                    continue
                value = self.constant(other)
                if value is not None and np.size(value) == 1:
                    scalar = np.asarray(value).reshape(()).item()
                    if scalar not in values:
                        values.append(scalar)
        return tuple(values)

    def input_ancestors(self, names: Iterable[str]) -> set[str]:
        """The graph inputs `names` are computed from (through node inputs and the values
        node bodies capture)."""
        producers = {o: n for n in self.nodes for o in n.outputs if o}
        inputs = set(self.inputs)
        found: set[str] = set()
        seen: set[str] = set()
        stack = [n for n in names if n]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in inputs:
                found.add(name)
            node = producers.get(name)
            if node is not None:
                stack.extend(i for i in (*node.inputs, *node.captures) if i)
        return found


def pin_fixes(view: GraphView, errors: Iterable[Any], dtypes: Mapping[str, str]
              ) -> dict[int, tuple[Fix, ...]]:
    """Pins suggested per conversion error (keyed by position in `errors`): the control-only
    graph inputs behind the values the failing handler needed as constants (`value_name`,
    `constant_candidates`) or behind the failed node's conversion-time slots; for errors
    about a value that had to be constant, also its integer and bool graph inputs (`dtypes`:
    input name -> dtype). Errors with nothing to pin are left out."""
    control = {c.name: c for c in view.control_inputs()}
    by_name = {n.name: n for n in view.nodes}
    out: dict[int, tuple[Fix, ...]] = {}
    for index, err in enumerate(errors):
        wanted = list(getattr(err, "constant_candidates", ()) or ())
        value_name = getattr(err, "value_name", None)
        if value_name:
            wanted.append(value_name)
        node = by_name.get(getattr(err, "node_name", None) or "")
        if node is not None:
            wanted += [node.inputs[i] for i in view.slots(node) if i < len(node.inputs)]
        ancestors = view.input_ancestors(wanted)
        names = [n for n in view.inputs if n in ancestors and n in control]
        if value_name or getattr(err, "reason_code", "") == "requires_constant_input":
            names += [n for n in view.inputs if n in ancestors and n not in names
                      and _discrete(dtypes.get(n, ""))]
        fixes = [control[n].fix if n in control else Fix("pin_inputs", n) for n in names]
        if fixes:
            out[index] = tuple(fixes)
    return out


def _discrete(dtype: str) -> bool:
    return dtype == "bool" or dtype.startswith(("int", "uint"))
