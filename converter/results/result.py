"""`ConversionResult`: what converting a model gives (the WebNN graph, the conversion report,
the source-side descriptions of inputs and outputs) and how to run it with source-side
names and dtypes. Front ends build it; `converter.convert()` returns it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from converter.core.ir import SourceGraph, ValueInfo
from converter.core.webnn import MLGraph, MLOperandDescriptor
from converter.core.webnn.run_memory import check_budgets
from converter.results.compiled import CompiledModel, check_names
from converter.results.host_steps import HostSteps
from converter.results.report import ConversionReport
from converter.results.state import StatePair


@dataclass(frozen=True, eq=False)
class ConversionResult:
    """A converted model.

    `graph` is the WebNN graph, `report` the conversion report, `inputs`/`outputs` the
    source-side descriptions (source dtypes such as "bool" or "float64", static shapes),
    `input_descriptors`/`output_descriptors` the WebNN ones. A pass that rewrites the graph
    gives a new result (`with_graph`); a result is never changed in place (its report is the
    front end's until a pass adds notes). `state` lists the carried states of a streaming
    model (`converter.results.state`, docs/state.md): `run` and `compile()`'s sessions carry
    them between calls (`reset_state` starts over).

    `host` holds the host steps of a model with a data-dependent tail
    (`converter.results.host_steps`, docs/host-steps.md; None: none): `run` and `compile()`'s
    sessions run them after the graph. Then `graph.outputs` are the model outputs the graph
    computes plus the boundary values the host steps read, and the outputs the host steps give
    have `shape` None (data-dependent).
    """

    graph: MLGraph
    report: ConversionReport
    inputs: tuple[ValueInfo, ...]
    outputs: tuple[ValueInfo, ...]
    source: SourceGraph = field(repr=False)
    _executables: dict[tuple[str, str, int], CompiledModel] = field(default_factory=dict,
                                                                     repr=False)
    """The sessions `run` made, by (backend, device, threads)."""
    state: tuple[StatePair, ...] = ()
    host: HostSteps | None = None

    def with_graph(self, graph: MLGraph, notes: Iterable[str] = ()) -> ConversionResult:
        """A new result holding `graph` (same inputs, outputs and names; a graph pass's
        output), its report a copy of this one with `notes` added to the warnings. Runs of the
        new result compile `graph` afresh; when `graph` is this result's own graph, the
        sessions this result compiled for `run` are shared. This result is left as it was."""
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

    def compile(self, backend: str = "reference", device: str = "cpu", threads: int = 0
                ) -> CompiledModel:
        """A new session running this result's graph on `backend` ("reference",
        "onnxruntime", "torch") on `device` with `threads` intra-op threads (0: the
        backend's default): the run budgets are checked (`BudgetExceeded`, the budgets
        active now) and the graph compiled once; its `run(inputs)` takes and gives what
        `run` does, with only a feed check, the backend call and the output wrapping per
        call (`converter.results.compiled`). ValueError for an unknown or unavailable
        backend or device."""
        return CompiledModel(self.graph, self.inputs, self.outputs, backend, device, threads,
                             self.state, self.host)

    def state_feeds(self) -> dict[str, np.ndarray]:
        """Initial values of the state inputs that are the graph's own (not among `inputs`,
        e.g. a TFLite resource variable's): what a single run from the start feeds them
        beside the caller's `inputs` (`graph_feeds`)."""
        own = set(self.input_names)
        return {p.input: np.array(p.initial) for p in self.state
                if p.input not in own and p.input in self.graph.inputs}

    def reset_state(self) -> None:
        """Carried state of every session `run` made back to its initial values."""
        for session in self._executables.values():
            session.reset_state()

    def run(self, inputs: Mapping[str, Any], backend: str = "reference", *,
            device: str = "cpu", threads: int = 0) -> dict[str, np.ndarray]:
        """Run the graph. `inputs` are keyed by source input name and use source dtypes (bool,
        float64 are converted); inputs the graph does not use are accepted and ignored.
        Returns {source output name: array in the source dtype}, in graph output order.
        Raises `BudgetExceeded` before running a graph over the active run budgets
        (`converter.core.webnn.run_memory`; `budgets.using(Budgets(max_tensor_bytes=...))`
        raises them). The graph is compiled on the first run for each (backend, device,
        threads) and the session kept (`compile`); a run then checks the active budgets
        against the session's measured memory and calls `CompiledModel.run`, which carries
        the state of a streaming model from one call to the next."""
        key = (backend, device, threads)
        session = self._executables.get(key)
        if session is None:
            if not self.state:  # a stateful session checks its optional state inputs
                check_names(frozenset(self.input_names), inputs)
            session = self._executables[key] = self.compile(backend, device, threads)
        else:
            check_budgets(session.memory)
        return session.run(inputs)
