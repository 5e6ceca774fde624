"""`ConversionResult`: what converting a model gives (the WebNN graph, the conversion report,
the source-side descriptions of inputs and outputs) and how to run it with source-side
names and dtypes. Front ends build it; `converter.convert()` returns it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.feeds import graph_feeds, source_outputs
from converter.core.ir import SourceGraph, ValueInfo
from converter.core.webnn import MLGraph, MLOperandDescriptor
from converter.core.webnn.context import Executable
from converter.core.webnn.run_memory import check_run_memory
from converter.results.report import ConversionReport


@dataclass(frozen=True, eq=False)
class ConversionResult:
    """A converted model.

    `graph` is the WebNN graph, `report` the conversion report, `inputs`/`outputs` the
    source-side descriptions (source dtypes such as "bool" or "float64", static shapes),
    `input_descriptors`/`output_descriptors` the WebNN ones. A pass that rewrites the graph
    gives a new result (`with_graph`); a result is never changed in place (its report is the
    front end's until a pass adds notes).
    """

    graph: MLGraph
    report: ConversionReport
    inputs: tuple[ValueInfo, ...]
    outputs: tuple[ValueInfo, ...]
    source: SourceGraph = field(repr=False)
    _executables: dict[str, Executable] = field(default_factory=dict, repr=False)

    def with_graph(self, graph: MLGraph, notes: Iterable[str] = ()) -> ConversionResult:
        """A new result holding `graph` (same inputs, outputs and names; a graph pass's
        output), its report a copy of this one with `notes` added to the warnings. Runs of the
        new result compile `graph` afresh; when `graph` is this result's own graph, the
        executables this result compiled are shared. This result is left as it was."""
        report = dataclasses.replace(self.report, nodes=list(self.report.nodes),
                                     warnings=[*self.report.warnings, *notes])
        executables = self._executables if graph is self.graph else {}
        return dataclasses.replace(self, graph=graph, report=report, _executables=executables)

    @property
    def input_names(self) -> list[str]:
        return [vi.name for vi in self.inputs]

    @property
    def output_names(self) -> list[str]:
        return [vi.name for vi in self.outputs]

    @property
    def input_descriptors(self) -> dict[str, MLOperandDescriptor]:
        return self.graph.input_descriptors

    @property
    def output_descriptors(self) -> dict[str, MLOperandDescriptor]:
        return self.graph.output_descriptors

    def run(self, inputs: Mapping[str, Any], backend: str = "reference"
            ) -> dict[str, np.ndarray]:
        """Run the graph. `inputs` are keyed by source input name and use source dtypes (bool,
        float64 are converted); inputs the graph does not use are accepted and ignored.
        Returns {source output name: array in the source dtype}, in graph output order.
        Raises `BudgetExceeded` before running a graph over the active run budgets
        (`converter.core.webnn.run_memory`; `budgets.using(Budgets(max_tensor_bytes=...))` raises them)."""
        names = set(self.input_names)
        extra = sorted(set(inputs) - names)
        missing = sorted(names - set(inputs))
        if extra or missing:
            raise InvalidModel(f"run: inputs do not match the model (missing {missing}, "
                               f"unexpected {extra})")
        check_run_memory(self.graph)
        arrays = graph_feeds(self.graph, self.inputs, inputs)
        if backend == "reference" and self.graph.context.backend.name == "reference":
            results = self.graph.context.compute(self.graph, arrays)
        else:
            exe = self._executables.get(backend)
            if exe is None:
                from converter.runtimes import get_backend

                exe = self._executables[backend] = get_backend(backend).compile(self.graph)
            results = exe.run(arrays)
        return source_outputs(self.outputs, results)
