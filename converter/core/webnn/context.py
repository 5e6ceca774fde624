"""MLContext, MLTensor and MLGraph: contexts, their tensors, the graphs they run (dispatch and
the compute() convenience) and the protocol of the backend a context runs graphs on.

A context, its graphs and its backend refer to each other, so they share this module; the
backends themselves register by name in `converter.core.webnn.backends` (the runtimes package
registers the built-in ones) and `ML.create_context` (`converter.core.webnn.ml`) finds them.

The spec's promise-returning methods are synchronous here: `read_tensor` returns the data,
`dispatch` runs the graph before returning. `compute` and `dispatch` check the run budgets
first (`converter.core.webnn.run_memory`: the largest tensor and the estimated peak of the run against
the active `max_tensor_bytes` / `max_run_bytes`), so a graph asking for more is one
`BudgetExceeded`, never an allocation that fails half way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from converter.core.webnn import limits
from converter.core.webnn.dtypes import DATA_TYPES
from converter.core.webnn.errors import MLInvalidStateError, MLTypeError
from converter.core.webnn.operand import MLOperand, MLOperandDescriptor, Operation
from converter.core.webnn.run_memory import check_run_memory
from converter.core.webnn.validation import descriptor


class Executable(Protocol):
    """A graph compiled by a backend, run once per `compute` / `dispatch`."""

    def run(self, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]: ...


class Backend(Protocol):
    """What runs a context's graphs: `name` keys the compiled forms a graph caches. A backend
    whose graphs can output more than the spec's eight data types (the 4-bit ones) says so in
    an `output_data_types` tuple (read by `MLContext.output_data_types`)."""

    name: str

    def compile(self, graph: MLGraph) -> Executable: ...


@dataclass(eq=False)
class MLTensor:
    """A tensor owned by a context. Data lives in `_data` (a numpy array of the dtype)."""

    context: MLContext = field(repr=False)
    descriptor: MLOperandDescriptor
    readable: bool = False
    writable: bool = False
    constant: bool = False
    destroyed: bool = False
    _data: np.ndarray | None = field(default=None, repr=False)

    @property
    def data(self) -> np.ndarray:
        """The tensor's contents (an internal view; `readTensor` returns a copy)."""
        if self._data is None:
            raise MLInvalidStateError("the tensor holds no data")
        return self._data

    @property
    def data_type(self) -> str:
        return self.descriptor.data_type

    @property
    def shape(self) -> tuple[int, ...]:
        return self.descriptor.shape

    def destroy(self) -> None:
        """Idempotent; the tensor can no longer be read, written or dispatched."""
        self.destroyed = True


@dataclass(frozen=True, eq=False)
class MLGraph:
    """A built graph: only what the outputs reach.

    `inputs` maps each reachable input name to its operand, `constants` lists the reachable
    constant operands, `operations` the reachable operations in topological order, `outputs`
    maps output names to operands. Backends cache compiled forms in `_compiled`.

    `narrowed_inputs` / `narrowed_outputs` name the inputs and outputs whose values callers
    hold in a wider integer type than the graph's (name -> that type, e.g. "int64" for an
    int32 input that `converter.passes.targets` narrowed for a target without int64): feeds and the
    generated JavaScript convert such inputs with a range check, and such outputs back.
    """

    context: MLContext = field(repr=False)
    inputs: dict[str, MLOperand]
    constants: tuple[MLOperand, ...]
    operations: tuple[Operation, ...]
    outputs: dict[str, MLOperand]
    narrowed_inputs: dict[str, str] = field(default_factory=dict)
    narrowed_outputs: dict[str, str] = field(default_factory=dict)
    _compiled: dict[str, Executable] = field(default_factory=dict, repr=False)
    _state: dict[str, bool] = field(default_factory=lambda: {"destroyed": False}, repr=False)

    @property
    def input_descriptors(self) -> dict[str, MLOperandDescriptor]:
        return {name: op.descriptor for name, op in self.inputs.items()}

    @property
    def output_descriptors(self) -> dict[str, MLOperandDescriptor]:
        return {name: op.descriptor for name, op in self.outputs.items()}

    @property
    def destroyed(self) -> bool:
        return self._state["destroyed"]

    def destroy(self) -> None:
        """Release the graph; later dispatches raise MLInvalidStateError."""
        self._state["destroyed"] = True
        self._compiled.clear()

    def check_usable(self) -> None:
        if self.destroyed:
            raise MLInvalidStateError("dispatch: the graph has been destroyed")


class MLContext:
    """A context: creates tensors, runs built graphs on its backend."""

    def __init__(self, backend: Backend, *, power_preference: str = "default",
                 accelerated: bool = True) -> None:
        self.backend = backend
        self.power_preference = power_preference
        self.accelerated = accelerated
        self.lost = False

    def _check_alive(self, what: str) -> None:
        if self.lost:
            raise MLInvalidStateError(f"{what}: the context has been destroyed")

    @property
    def output_data_types(self) -> tuple[str, ...]:
        """The data types this context's graphs can output (the backend's
        `output_data_types`, else the spec's eight)."""
        types: tuple[str, ...] = getattr(self.backend, "output_data_types", DATA_TYPES)
        return types

    def op_support_limits(self) -> dict[str, Any]:
        """The spec's MLOpSupportLimits, generated from the table that validation uses."""
        return limits.op_support_limits(getattr(self.backend, "preferred_input_layout", "nchw"),
                                        self.output_data_types)

    # -- tensors -------------------------------------------------------------------------
    def create_tensor(self, shape: Any, data_type: str, *, readable: bool = False,
                      writable: bool = False) -> MLTensor:
        """A zero-initialised tensor."""
        self._check_alive("createTensor")
        desc = descriptor("createTensor", data_type, shape)
        return MLTensor(self, desc, readable, writable, False, False,
                        np.zeros(desc.shape, desc.data_type))

    def create_constant_tensor(self, shape: Any, data_type: str, data: Any) -> MLTensor:
        """A constant tensor, usable only through `MLGraphBuilder.constant(tensor)`."""
        self._check_alive("createConstantTensor")
        desc = descriptor("createConstantTensor", data_type, shape)
        arr = _buffer_to_array("createConstantTensor", desc, data)
        return MLTensor(self, desc, False, False, True, False, arr)

    def write_tensor(self, tensor: MLTensor, data: Any) -> None:
        """Copy `data` (array of the tensor's dtype, or raw bytes) into a writable tensor."""
        self._check_alive("writeTensor")
        self._own(tensor, "writeTensor")
        if not tensor.writable:
            raise MLTypeError("writeTensor: the tensor is not writable")
        tensor._data = _buffer_to_array("writeTensor", tensor.descriptor, data)

    def read_tensor(self, tensor: MLTensor) -> np.ndarray:
        """A copy of a readable tensor's data."""
        self._check_alive("readTensor")
        if tensor.destroyed:
            raise MLInvalidStateError("readTensor: the tensor has been destroyed")
        self._own(tensor, "readTensor")
        if not tensor.readable:
            raise MLTypeError("readTensor: the tensor is not readable")
        return tensor.data.copy()

    def _own(self, tensor: Any, what: str) -> None:
        if not isinstance(tensor, MLTensor):
            raise MLTypeError(f"{what}: expected an MLTensor")
        if tensor.context is not self:
            raise MLTypeError(f"{what}: the tensor belongs to another context")
        if tensor.destroyed:
            raise MLTypeError(f"{what}: the tensor has been destroyed")

    # -- execution -----------------------------------------------------------------------
    def dispatch(self, graph: MLGraph, inputs: Mapping[str, MLTensor],
                 outputs: Mapping[str, MLTensor]) -> None:
        """Run `graph` reading `inputs` and writing `outputs` (the spec's MLTensor rules)."""
        self._check_alive("dispatch")
        if not isinstance(graph, MLGraph) or graph.context is not self:
            raise MLTypeError("dispatch: the graph was built for another context")
        graph.check_usable()
        tensors = [*inputs.values(), *outputs.values()]
        if len({id(t) for t in tensors}) != len(tensors):
            raise MLTypeError("dispatch: the same MLTensor appears more than once")
        for t in tensors:
            self._own(t, "dispatch")
            if t.constant:
                raise MLTypeError("dispatch: constant tensors cannot be graph inputs or outputs")
        _match("dispatch", "inputs", inputs, graph.input_descriptors)
        _match("dispatch", "outputs", outputs, graph.output_descriptors)
        results = self._run(graph, {n: t.data for n, t in inputs.items()}, "dispatch")
        for name, tensor in outputs.items():
            tensor._data = results[name]

    def compute(self, graph: MLGraph, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Convenience: run `graph` on numpy inputs and return {output name: array}.

        Inputs must name exactly the graph's inputs. numpy arrays must have the input's dtype
        and shape; Python numbers and lists are converted to the input's dtype.
        """
        self._check_alive("compute")
        if not isinstance(graph, MLGraph) or graph.context is not self:
            raise MLTypeError("compute: the graph was built for another context")
        graph.check_usable()
        descs = graph.input_descriptors
        if set(inputs) != set(descs):
            missing, extra = sorted(set(descs) - set(inputs)), sorted(set(inputs) - set(descs))
            raise MLTypeError(f"compute: inputs do not match the graph (missing {missing}, "
                              f"unexpected {extra})")
        arrays = {}
        for name, value in inputs.items():
            desc = descs[name]
            arr = value if isinstance(value, np.ndarray) else np.asarray(value, desc.data_type)
            if arr.dtype != np.dtype(desc.data_type) or arr.shape != desc.shape:
                raise MLTypeError(f"compute: input {name!r} is {arr.dtype}{list(arr.shape)}, "
                                  f"the graph expects {desc.data_type}{list(desc.shape)}")
            arrays[name] = arr
        return self._run(graph, arrays, "compute")

    def _run(self, graph: MLGraph, arrays: dict[str, np.ndarray], what: str
             ) -> dict[str, np.ndarray]:
        """Run `graph` on the backend, after checking the run budgets (`BudgetExceeded`:
        its largest tensor or its estimated peak is over the active `max_tensor_bytes` /
        `max_run_bytes`, `converter.core.webnn.run_memory`)."""
        check_run_memory(graph, what=what)
        key = self.backend.name
        executable = graph._compiled.get(key)
        if executable is None:
            executable = graph._compiled[key] = self.backend.compile(graph)
        results: dict[str, np.ndarray] = executable.run(arrays)
        return results

    def destroy(self) -> None:
        """Mark the context lost; its graphs can no longer be dispatched."""
        self.lost = True


def _buffer_to_array(what: str, desc: MLOperandDescriptor, data: Any) -> np.ndarray:
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        if len(raw) != desc.byte_length:
            raise MLTypeError(f"{what}: buffer has {len(raw)} bytes, the descriptor needs "
                              f"{desc.byte_length}")
        return np.frombuffer(raw, desc.data_type).reshape(desc.shape).copy()
    arr = np.asarray(data)
    if arr.dtype == np.uint8 and desc.data_type != "uint8":
        return _buffer_to_array(what, desc, arr.tobytes())
    if arr.dtype != np.dtype(desc.data_type):
        raise MLTypeError(f"{what}: data of dtype {arr.dtype} does not match {desc.data_type}")
    if arr.size != desc.size:
        raise MLTypeError(f"{what}: data has {arr.size} elements, the descriptor needs "
                          f"{desc.size}")
    return np.array(arr, copy=True).reshape(desc.shape)


def _match(what: str, role: str, tensors: Mapping[str, MLTensor],
           expected: Mapping[str, MLOperandDescriptor]) -> None:
    if set(tensors) != set(expected):
        raise MLTypeError(f"{what}: {role} names {sorted(tensors)} do not match the graph's "
                          f"{sorted(expected)}")
    for name, t in tensors.items():
        if t.descriptor != expected[name]:
            raise MLTypeError(f"{what}: {role} {name!r} is {t.data_type}{list(t.shape)}, the "
                              f"graph expects {expected[name].data_type}"
                              f"{list(expected[name].shape)}")
