"""`LoadedModel`: an exported model loaded back as a whole pipeline: the WebNN graph, its
carried state (the manifest's state table) and its host steps (`<stem>.host.json`).

```python
model = converter.load_model("models/detector_webnn")
outputs = model.run({"image": image})              # graph, then host steps
session = model.compile("onnxruntime")             # a CompiledModel, state carried
```

`converter.io.export.exporter.load_model` makes it; `converter.load` still gives the bare
`MLGraph`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from converter.core.ir import ValueInfo
from converter.core.webnn import MLGraph
from converter.core.webnn.run_memory import check_budgets
from converter.results.compiled import CompiledModel, check_names
from converter.results.host_steps import HostSteps
from converter.results.state import StatePair


@dataclass(frozen=True, eq=False)
class LoadedModel:
    """A loaded export. `inputs` / `outputs` are the model's (caller-side names and data
    types: a target's narrowed int64 is int64 again; outputs the host steps give have shape
    None); `state` its carried states; `host` its host steps (None: none).

    Restrictions: a model exported without `.host.json` has the graph's own outputs; bool
    inputs and outputs of such a graph are uint8 (the graph files do not record bool)."""

    graph: MLGraph
    inputs: tuple[ValueInfo, ...]
    outputs: tuple[ValueInfo, ...]
    state: tuple[StatePair, ...] = ()
    host: HostSteps | None = None
    _sessions: dict[tuple[str, str, int], CompiledModel] = field(default_factory=dict,
                                                                 repr=False)

    @property
    def input_names(self) -> list[str]:
        return [vi.name for vi in self.inputs]

    @property
    def output_names(self) -> list[str]:
        return [vi.name for vi in self.outputs]

    def compile(self, backend: str = "reference", device: str = "cpu", threads: int = 0
                ) -> CompiledModel:
        """A new session running the graph and then the host steps (see
        `ConversionResult.compile`)."""
        return CompiledModel(self.graph, self.inputs, self.outputs, backend, device, threads,
                             self.state, self.host)

    def reset_state(self) -> None:
        """Carried state of every session `run` made back to its initial values."""
        for session in self._sessions.values():
            session.reset_state()

    def run(self, inputs: Mapping[str, Any], backend: str = "reference", *,
            device: str = "cpu", threads: int = 0) -> dict[str, np.ndarray]:
        """The model's outputs for `inputs` (keyed by input name), in model order: the graph
        run on `backend`, then the host steps; one session per (backend, device, threads)
        is kept and carries the state from call to call (see `ConversionResult.run`)."""
        key = (backend, device, threads)
        session = self._sessions.get(key)
        if session is None:
            if not self.state:
                check_names(frozenset(self.input_names), inputs)
            session = self._sessions[key] = self.compile(backend, device, threads)
        else:
            check_budgets(session.memory)
        return session.run(inputs)
