"""`ConversionResult`: what converting a model gives (the WebNN graph, the conversion report,
the source-side descriptions of inputs and outputs) and how to run it with source-side
names and dtypes. Front ends build it; `converter.convert()` returns it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import InvalidModel
from .importer import ConversionReport, webnn_dtype
from .ir import SourceGraph, ValueInfo
from .webnn import MLGraph, MLOperandDescriptor


@dataclass(frozen=True, eq=False)
class ConversionResult:
    """A converted model.

    `graph` is the WebNN graph, `report` the conversion report, `inputs`/`outputs` the
    source-side descriptions (source dtypes such as "bool" or "float64", static shapes),
    `input_descriptors`/`output_descriptors` the WebNN ones.
    """

    graph: MLGraph
    report: ConversionReport
    inputs: tuple[ValueInfo, ...]
    outputs: tuple[ValueInfo, ...]
    source: SourceGraph = field(repr=False)
    _executables: dict[str, Any] = field(default_factory=dict, repr=False)

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
        Returns {source output name: array in the source dtype}, in graph output order."""
        names = set(self.input_names)
        extra = sorted(set(inputs) - names)
        missing = sorted(names - set(inputs))
        if extra or missing:
            raise InvalidModel(f"run: inputs do not match the model (missing {missing}, "
                               f"unexpected {extra})")
        arrays: dict[str, np.ndarray] = {}
        for vi in self.inputs:
            if vi.name not in self.graph.inputs:
                continue
            target = webnn_dtype(vi.dtype)
            arr = np.asarray(inputs[vi.name], dtype=vi.dtype)
            arrays[vi.name] = arr.astype(target) if target != vi.dtype else arr
        if backend == "reference" and self.graph.context.backend.name == "reference":
            results = self.graph.context.compute(self.graph, arrays)
        else:
            exe = self._executables.get(backend)
            if exe is None:
                from .runtime import get_backend

                exe = self._executables[backend] = get_backend(backend).compile(self.graph)
            results = exe.run(arrays)
        out: dict[str, np.ndarray] = {}
        for vi in self.outputs:
            arr = np.asarray(results[vi.name])
            if vi.dtype in ("bool", "float64") and arr.dtype != np.dtype(vi.dtype):
                arr = arr.astype(vi.dtype)
            out[vi.name] = arr
        return out
