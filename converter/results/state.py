"""Carried state: the graph inputs whose value on the next run is a graph output of this run.

A streaming model keeps state between calls: a TFLite model in resource variables
(VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE), an ONNX model as an input/output pair
(silero-vad's `state` -> `stateN`). WebNN graphs are stateless, so the converter makes the
state explicit: one graph input and one graph output per state, recorded as a `StatePair` on
the `ConversionResult` (`ConversionResult.state`), and whoever runs the graph carries it:
`CompiledModel.run` / `ConversionResult.run` in Python, `createModel(...).compute()` in the
generated JavaScript (see docs/state.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True, eq=False)
class StatePair:
    """One carried state: graph input `input` takes, on each run after the first, what graph
    output `output` gave on the run before; on the first run (and after a reset) it takes
    `initial` (a read-only array of the input's graph data type and shape: the variable's
    initial value, or zeros). `source` says where the state comes from (for reports), e.g.
    "resource variable 'stream/state'" or "input/output pair"."""

    input: str
    output: str
    initial: np.ndarray = field(repr=False)
    source: str = ""

    def __post_init__(self) -> None:
        arr = np.array(self.initial)
        arr.setflags(write=False)
        object.__setattr__(self, "initial", arr)

    def to_dict(self) -> dict[str, Any]:
        """JSON form without the value: names, data type, shape, where it comes from."""
        return {"input": self.input, "output": self.output,
                "dataType": self.initial.dtype.name, "shape": list(self.initial.shape),
                "source": self.source}


def initial_state(pairs: Iterable[StatePair]) -> dict[str, np.ndarray]:
    """{state input name: initial value} (fresh writable copies)."""
    return {p.input: np.array(p.initial) for p in pairs}


def carried_names(pairs: Iterable[StatePair]) -> frozenset[str]:
    """The graph input names that carried state feeds."""
    return frozenset(p.input for p in pairs)


def next_state(pairs: Iterable[StatePair], outputs: Mapping[str, np.ndarray]
               ) -> dict[str, np.ndarray]:
    """{state input name: the value of its output in `outputs`} (graph-side values)."""
    return {p.input: outputs[p.output] for p in pairs}


def state_notes(pairs: Iterable[StatePair]) -> list[str]:
    """The report line for the carried states."""
    pairs = list(pairs)
    if not pairs:
        return []
    what = ", ".join(f"{p.input} <- {p.output}" + (f" ({p.source})" if p.source else "")
                     for p in pairs)
    return [f"carried state: {what}; runs of a compiled model (and createModel().compute() in "
            "JavaScript) feed each state input the output of the run before (initial value "
            "first), unless the caller gives it; reset_state() / resetState() start over"]
