"""The converted graph's value for every source value name ("taps").

`convert_tapped(source)` re-runs the importer on an already-read source graph with every
source node output that became a graph operation added to the built graph as an extra
output. The result maps each source value name to either the name of the graph output that
carries it or, for values folded at conversion time, the constant array itself.

Until the importer has a public hook for this (requested: `Importer(..., expose_all=True)` or
`ImportResult.values`), this module subclasses the importer and extends its `_outputs` step.
Restrictions: values produced inside inlined function bodies and subgraphs have scoped names
and are not tapped; graph inputs are not tapped (they are the inputs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..frontends import get
from ..importer import Importer
from ..webnn import MLGraph, MLOperand

TAP_PREFIX = "__tap__"
"""Prefix of the extra output names (`__tap__<n>`, skipping names the graph already has)."""


@dataclass(frozen=True, eq=False)
class TappedGraph:
    """`graph` with extra outputs; `outputs` maps a source value name to the graph output
    holding it; `constants` maps a source value name to its folded value."""

    graph: MLGraph
    outputs: dict[str, str]
    constants: dict[str, np.ndarray]


class _TapMixin:
    """Adds every source node output operand to the graph outputs."""

    tap_outputs: dict[str, str]
    tap_constants: dict[str, np.ndarray]

    def graph_outputs(self) -> dict[str, MLOperand]:
        outputs: dict[str, MLOperand] = super().graph_outputs()  # type: ignore[misc]
        self.tap_outputs = {}
        self.tap_constants = {}
        if self.errors:  # type: ignore[attr-defined]
            return outputs
        by_operand = {id(op): name for name, op in outputs.items()}
        source = self.source  # type: ignore[attr-defined]
        operands = self.operands  # type: ignore[attr-defined]
        consts = self.consts  # type: ignore[attr-defined]
        for name in outputs:
            self.tap_outputs[name] = name
        for node in source.nodes:
            for name in node.outputs:
                if not name or name in self.tap_outputs or name in self.tap_constants:
                    continue
                op = operands.get(name)
                if op is None:
                    if name in consts:
                        self.tap_constants[name] = np.asarray(consts[name])
                    continue
                if op.kind == "constant" and op.value is not None:
                    self.tap_constants[name] = np.asarray(op.value)
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
                self.tap_outputs[name] = key
        return outputs


def _importer_class(source: Any) -> type[Importer]:
    base = get(source.source_format).impl().importer_class()
    return type(f"Tapped{base.__name__}", (_TapMixin, base), {})


def convert_tapped(source: Any) -> TappedGraph:
    """Convert `source` (a SourceGraph as read for the normal conversion) with taps.
    Raises what the importer raises."""
    lookup = get(source.source_format).op_registry().lookup
    importer = _importer_class(source)(source, lookup)
    result = importer.run()
    return TappedGraph(result.graph, dict(importer.tap_outputs),  # type: ignore[attr-defined]
                       dict(importer.tap_constants))  # type: ignore[attr-defined]
