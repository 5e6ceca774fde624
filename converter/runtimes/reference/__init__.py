"""The numpy reference backend: exact spec semantics, float64 inside, the project's oracle."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from typing import Any

import numpy as np

from converter.core.webnn.context import MLGraph
from converter.core.webnn.dtypes import ALL_DATA_TYPES, numpy_dtype
from converter.core.webnn.errors import MLOperationError
from converter.core.webnn.operand import MLOperand, Operation
from converter.runtimes.reference import kernels as _kernels_pkg
from converter.runtimes.reference.registry import KERNELS

for _mod in pkgutil.iter_modules(_kernels_pkg.__path__):
    importlib.import_module(f"{_kernels_pkg.__name__}.{_mod.name}")


class ReferenceExecutable:
    """A graph prepared for repeated runs: kernels looked up, last uses computed."""

    def __init__(self, graph: MLGraph) -> None:
        missing = sorted({op.op for op in graph.operations if op.op not in KERNELS})
        if missing:
            raise MLOperationError(f"reference backend has no kernel for {', '.join(missing)}")
        self.graph = graph
        last_use: dict[int, int] = {}
        for i, op in enumerate(graph.operations):
            for dep in op.operand_inputs():
                last_use[id(dep)] = i
        keep = {id(o) for o in graph.outputs.values()}
        self._release: list[list[int]] = [[] for _ in graph.operations]
        for key, i in last_use.items():
            if key not in keep:
                self._release[i].append(key)

    def run(self, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        values: dict[int, np.ndarray] = {}
        for name, operand in self.graph.inputs.items():
            values[id(operand)] = np.asarray(inputs[name])
        for operand in self.graph.constants:
            values[id(operand)] = operand.value  # type: ignore[assignment]
        for i, op in enumerate(self.graph.operations):
            args = [_resolve(a, values) for a in op.args]
            options = {k: _resolve(val, values) for k, val in op.options.items()}
            try:
                results = KERNELS[op.op](op, args, options)
            except FloatingPointError as exc:  # pragma: no cover - errstate is set by kernels
                raise MLOperationError(f"{op.op}: {exc}") from exc
            for out, res in zip(op.outputs, results, strict=True):
                values[id(out)] = _finish(op, out, res)
            for key in self._release[i]:
                values.pop(key, None)
        return {name: _owned(values[id(o)]) for name, o in self.graph.outputs.items()}


def _owned(arr: np.ndarray) -> np.ndarray:
    """A writable array that shares no memory with inputs, constants or other outputs."""
    return arr if arr.flags.owndata and arr.flags.writeable else arr.copy()


def _resolve(value: Any, values: dict[int, np.ndarray]) -> Any:
    if isinstance(value, MLOperand):
        return values[id(value)]
    if isinstance(value, (list, tuple)) and any(isinstance(v, MLOperand) for v in value):
        return [values[id(v)] for v in value]
    return value


def _finish(op: Operation, out: MLOperand, res: np.ndarray) -> np.ndarray:
    arr = np.asarray(res)
    dtype = numpy_dtype(out.data_type)  # int4/uint4 live in int8/uint8 arrays
    if arr.dtype != dtype:
        with np.errstate(over="ignore", invalid="ignore"):
            arr = arr.astype(dtype)
    if arr.shape != out.shape:
        raise MLOperationError(f"{op.op}: reference kernel produced shape {list(arr.shape)}, "
                               f"expected {list(out.shape)}")
    return arr


class ReferenceBackend:
    """Backend object registered as "reference" (CPU only)."""

    name = "reference"
    preferred_input_layout = "nchw"
    output_data_types = ALL_DATA_TYPES
    """Graph outputs may be int4/uint4 too (as WPT's quantizeLinear cases read them): such an
    output is returned as its int8/uint8 storage array, one value per element."""

    def compile(self, graph: MLGraph) -> ReferenceExecutable:
        return ReferenceExecutable(graph)


def create_backend(device: str, **options: object) -> ReferenceBackend:
    """The reference backend (CPU only, no options; ValueError otherwise)."""
    if options:
        raise ValueError(f"the reference backend takes no options, got {sorted(options)}")
    if device != "cpu":
        raise ValueError(f"the reference backend runs on the CPU only, not {device!r}")
    return ReferenceBackend()

