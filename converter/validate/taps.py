"""The converted graph's value for every source value name ("taps").

`convert_tapped(source)` re-runs the importer on an already-read source graph with every
source node output that became a graph operation added to the built graph as an extra
output. The result maps each source value name to either the name of the graph output that
carries it or, for values folded at conversion time, the constant array itself.

The taps are a plain `ImportObserver` (`converter.importer`): `on_node` records the source
nodes in graph order, `graph_outputs` adds their operands to the outputs `build()` gets.
Restrictions: values produced inside inlined function bodies and subgraphs have scoped names
and are not tapped; graph inputs are not tapped (they are the inputs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from converter.core.ir import Node
from converter.core.webnn import MLGraph, MLOperand
from converter.frontends import get
from converter.importer import ImportContext, ImportObserver, Value

TAP_PREFIX = "__tap__"
"""Prefix of the extra output names (`__tap__<n>`, skipping names the graph already has)."""


@dataclass(frozen=True, eq=False)
class TappedGraph:
    """`graph` with extra outputs; `outputs` maps a source value name to the graph output
    holding it; `constants` maps a source value name to its folded value."""

    graph: MLGraph
    outputs: dict[str, str]
    constants: dict[str, np.ndarray]


class Taps(ImportObserver):
    """Adds every source node output operand to the graph outputs."""

    def __init__(self) -> None:
        self.names: list[str] = []
        """Output value names of the source nodes, in graph order."""
        self.outputs: dict[str, str] = {}
        self.constants: dict[str, np.ndarray] = {}

    def on_node(self, node: Node, outputs: Sequence[Value | None]) -> None:
        self.names.extend(node.outputs)

    def graph_outputs(self, ctx: ImportContext, outputs: dict[str, MLOperand]
                      ) -> dict[str, MLOperand]:
        outputs = dict(outputs)
        by_operand = {id(op): name for name, op in outputs.items()}
        for name in outputs:
            self.outputs[name] = name
        for name in self.names:
            if not name or name in self.outputs or name in self.constants:
                continue
            op = ctx.operands.get(name)
            if op is None:
                if name in ctx.consts:
                    self.constants[name] = np.asarray(ctx.consts[name])
                continue
            if op.kind == "constant" and op.value is not None:
                self.constants[name] = np.asarray(op.value)
                continue
            if op.kind != "output":
                continue
            key = by_operand.get(id(op))
            if key is None:
                n = len(by_operand)
                while f"{TAP_PREFIX}{n}" in outputs:
                    n += 1
                key = by_operand[id(op)] = f"{TAP_PREFIX}{n}"
                outputs[key] = op
            self.outputs[name] = key
        return outputs


def convert_tapped(source: Any) -> TappedGraph:
    """Convert `source` (a SourceGraph as read for the normal conversion) with taps.
    Raises what the importer raises."""
    frontend = get(source.source_format)
    taps = Taps()
    result = frontend.impl().import_source(source, observer=taps)
    return TappedGraph(result.graph, dict(taps.outputs), dict(taps.constants))
