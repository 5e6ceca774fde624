"""`CompiledModel`: a converted model compiled once for one backend, device and thread count,
run many times with as little Python between the caller and the backend as possible.

```python
session = result.compile("onnxruntime", threads=1)     # budgets checked, graph compiled
outputs = session.run({"x": image})                     # source names and dtypes in and out
```

Everything that depends only on the graph is done when the session is made: the run budgets
(`converter.core.webnn.run_memory`, the budgets active then), the backend's compilation, and
per input and output the checks and conversions its types need (`converter.core.feeds`).
`run(feeds)` then compares the feeds' names, dtypes and shapes with those precomputed tuples,
calls the backend and wraps its outputs. A numpy array that already has the graph input's
dtype and shape is handed to the backend as it is (no copy here; the onnxruntime backend
binds a C-contiguous one without a copy too); any other value goes through
`converter.core.feeds.graph_value` (bool and float64 inputs, narrowed or widened integer
inputs with their range check, Python numbers and lists).

`ConversionResult.run` keeps one session per (backend, device, threads) and checks the run
budgets active at each call against the session's measured `memory` (a comparison, the graph
is not walked again).

A model with carried state (`converter.results.state.StatePair`, docs/state.md) is run
through `_run_carrying`: each state input the caller leaves out is fed the state the session
holds (the pair's initial value, then the output of the run before), and after each run the
session keeps the state outputs; `reset_state()` starts over. A stateless model pays
nothing for this (one attribute test per run).

A model with host steps (`converter.results.host_steps`, docs/host-steps.md) runs them after
the graph (`converter.runtimes.host.HostRunner`, built once per session) on the graph's
boundary outputs and the model inputs they read; `run` returns the model's outputs in model
order (the graph's and the host steps'), never the boundary values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.feeds import graph_value, source_outputs
from converter.core.ir import ValueInfo
from converter.core.webnn.context import Executable, MLGraph
from converter.core.webnn.run_memory import RunMemory, check_run_memory
from converter.results.state import StatePair, carried_names, initial_state
from converter.runtimes.host import HostRunner, StepsLike

_ndarray = np.ndarray


@dataclass(frozen=True)
class _Feed:
    """One source input the graph takes: its graph-side numpy dtype and shape; `direct` when
    a source value of that dtype is the graph's value unchanged (no carrier type, no
    narrowing or widening)."""

    name: str
    source_dtype: str
    graph_type: str
    dtype: np.dtype[Any] | None
    shape: tuple[int, ...]
    direct: bool


class CompiledModel:
    """A `ConversionResult`'s graph compiled for `backend` on `device` with `threads` intra-op
    threads (0: the backend's default; the reference backend takes none). Made by
    `ConversionResult.compile`; see the module docstring.

    `memory` is the graph's `RunMemory`, checked against the budgets active when the session
    was made (`BudgetExceeded` then); `run` does not check budgets again.

    Restrictions: `run` takes exactly the source inputs (`InvalidModel` naming the missing
    and unexpected ones; inputs the graph does not use are accepted and ignored) with the
    graph's static shapes (`InvalidModel` naming the input, its dtype and shape and the
    expected ones). A destroyed graph raises `MLInvalidStateError`. With carried `state`,
    state inputs may be left out (the session feeds the carried value) or given (that value
    is used and the run's state output carried on); `run` is then not thread-safe.
    """

    def __init__(self, graph: MLGraph, inputs: tuple[ValueInfo, ...],
                 outputs: tuple[ValueInfo, ...], backend: str = "reference",
                 device: str = "cpu", threads: int = 0,
                 state: tuple[StatePair, ...] = (), host: StepsLike | None = None) -> None:
        self.graph = graph
        self.state = state
        self._carried: dict[str, np.ndarray] = initial_state(state)
        self._state_names = carried_names(state)
        self.backend, self.device, self.threads = backend, device, threads
        self.memory: RunMemory = check_run_memory(graph)
        self.executable: Executable = compile_executable(graph, backend, device, threads)
        self._inputs = inputs
        self._host: HostRunner | None = None if host is None else HostRunner(host)
        host_reads = self._host.input_names if self._host is not None else ()
        self._host_inputs = {vi.name: vi.dtype for vi in inputs if vi.name in host_reads}
        """The model inputs the host steps read, with their source dtypes."""
        self._all_outputs = tuple(vi.name for vi in outputs)
        if host is not None:  # the graph's share of the model outputs
            outputs = tuple(vi for vi in outputs if vi.name in graph.outputs)
        self._outputs = outputs
        self._names = frozenset(vi.name for vi in inputs)
        feeds = [_feed(vi, graph) for vi in inputs if vi.name in graph.inputs]
        self._by_name = {f.name: f for f in feeds}
        self._direct = tuple((f.name, f.dtype, f.shape) for f in feeds if f.direct)
        self._converted = tuple(f for f in feeds if not f.direct)
        self._state = graph._state
        exact = getattr(self.executable, "run_exact", None)
        self._run: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]] = \
            exact if exact is not None and all(f.dtype is not None for f in feeds) \
            else self.executable.run
        """The backend's run; `run_exact` (no conversions: every feed is already an array
        of the input's dtype and shape) where the executable has one."""
        self._plain_outputs = all(_plain_output(vi, graph) for vi in outputs)
        self._output_names = tuple(vi.name for vi in outputs)
        self._same_outputs = self._plain_outputs and self._output_names == tuple(graph.outputs)
        """The backend's dict (a new one each run) is the answer as it is: the source
        outputs are the graph's, in its order and types."""

    @property
    def input_names(self) -> list[str]:
        return [vi.name for vi in self._inputs]

    @property
    def output_names(self) -> list[str]:
        return list(self._all_outputs)

    def reset_state(self) -> None:
        """Carried state back to its initial values (no-op for a stateless model)."""
        self._carried = initial_state(self.state)

    def run(self, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Run the graph on `inputs` keyed by source input name, in source dtypes; returns
        {source output name: array in the source dtype}, in graph output order. A model
        with carried state carries it (see the class docstring)."""
        if self.state:
            return self._run_carrying(inputs)
        if inputs.keys() != self._names:
            check_names(self._names, inputs)
        if self._state["destroyed"]:
            self.graph.check_usable()
        results = self._run(self._feeds(inputs))
        if self._host is not None:
            return self._with_host(results, inputs)
        return self._outputs_of(results)

    def _feeds(self, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """The backend's feeds of the source `inputs` (arrays of the graph's dtype and shape
        as they are, other values converted)."""
        feeds: dict[str, np.ndarray] = {}
        for name, dtype, shape in self._direct:
            value = inputs[name]
            if type(value) is not _ndarray or value.dtype is not dtype or value.shape != shape:
                value = self._feed(self._by_name[name], value)
            feeds[name] = value
        for f in self._converted:
            feeds[f.name] = self._feed(f, inputs[f.name])
        return feeds

    def _with_host(self, results: dict[str, np.ndarray], inputs: Mapping[str, Any]
                   ) -> dict[str, np.ndarray]:
        """The model outputs: the graph's, and the host steps' run on the graph's `results`
        and the model `inputs` they read (in their source dtypes)."""
        assert self._host is not None
        graph_part = self._outputs_of(results)
        feeds = {name: results[name] for name in self._host.input_names if name in results}
        for name, dtype in self._host_inputs.items():
            feeds[name] = np.asarray(inputs[name], dtype=dtype if dtype != "unknown" else None)
        host_part = self._host.run(feeds)
        return {name: graph_part[name] if name in graph_part else host_part[name]
                for name in self._all_outputs}

    def _outputs_of(self, results: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        if self._same_outputs:
            return results
        if self._plain_outputs:
            return {name: results[name] for name in self._output_names}
        return source_outputs(self._outputs, results)

    def _run_carrying(self, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """`run` for a model with carried state (see the class docstring)."""
        given = set(inputs)
        needed = self._names - self._state_names
        if not needed <= given or not given <= self._names | self._state_names:
            raise InvalidModel(f"run: inputs do not match the model (missing "
                               f"{sorted(needed - given)}, unexpected "
                               f"{sorted(given - self._names - self._state_names)}; state "
                               f"inputs {sorted(self._state_names)} are optional)")
        if self._state["destroyed"]:
            self.graph.check_usable()
        merged = {**{n: v for n, v in self._carried.items() if n in self._names}, **inputs}
        feeds = self._feeds(merged)
        for name in self._state_names - self._names:
            operand = self.graph.inputs.get(name)
            if operand is not None:
                value = inputs[name] if name in inputs else self._carried[name]
                feeds[name] = np.asarray(value, dtype=operand.data_type).reshape(
                    tuple(operand.shape))
        results = self._run(feeds)
        self._carried = {p.input: np.array(results[p.output]) for p in self.state}
        if self._host is not None:
            return self._with_host(results, merged)
        return self._outputs_of(results)

    @staticmethod
    def _feed(f: _Feed, value: Any) -> np.ndarray:
        """`value` as the graph takes input `f` (`graph_value`, then the graph's dtype), its
        shape checked."""
        arr = graph_value(value, f.source_dtype, f.graph_type, f.name)
        if f.dtype is not None and arr.dtype != f.dtype:  # as the backends' own run casts
            arr = arr.astype(f.dtype)
        if arr.shape != f.shape:
            raise InvalidModel(f"run: input {f.name!r} is {arr.dtype}{list(arr.shape)}, "
                               f"the model expects {f.graph_type}{list(f.shape)}")
        return arr


def check_names(names: frozenset[str], inputs: Mapping[str, Any]) -> None:
    """`InvalidModel` naming the missing and unexpected inputs unless `inputs` has exactly
    the keys `names`."""
    given = set(inputs)
    if given != names:
        raise InvalidModel(f"run: inputs do not match the model (missing "
                           f"{sorted(names - given)}, unexpected {sorted(given - names)})")


def compile_executable(graph: MLGraph, backend: str, device: str = "cpu", threads: int = 0
                       ) -> Executable:
    """`graph` compiled for the backend registered as `backend` (`converter.runtimes`) on
    `device` with `threads` intra-op threads (0: the backend's default; the reference backend
    takes none). The reference compilation of a reference-context graph is the one its
    context caches. ValueError for an unknown or unavailable backend or device; no budget
    check (the callers check the run budgets first)."""
    from converter.runtimes import get_backend

    if backend == "reference" and graph.context.backend.name == "reference" \
            and device == "cpu":
        executable = graph._compiled.get("reference")
        if executable is None:
            executable = graph._compiled["reference"] = graph.context.backend.compile(graph)
        return executable
    options: dict[str, Any] = {"threads": threads} if threads and backend != "reference" \
        else {}
    return get_backend(backend, device, **options).compile(graph)


def _feed(vi: ValueInfo, graph: MLGraph) -> _Feed:
    operand = graph.inputs[vi.name]
    graph_type = operand.data_type
    try:
        dtype: np.dtype[Any] | None = np.dtype(graph_type)
    except TypeError:  # int4 and other types numpy does not name
        dtype = None
    direct = dtype is not None and vi.dtype == graph_type
    return _Feed(vi.name, vi.dtype, graph_type, dtype, tuple(operand.shape), direct)


def _plain_output(vi: ValueInfo, graph: MLGraph) -> bool:
    """Whether the backend's value of output `vi` is already the source-side value (the
    graph's type is the source type: `source_outputs` would leave it as it is)."""
    operand = graph.outputs.get(vi.name)
    return operand is not None and operand.data_type == vi.dtype
