"""`converter.convert()`: an ONNX model -> a WebNN `MLGraph` plus a conversion report.

```python
import converter
result = converter.convert("model.onnx", free_dims={"batch": 1})
print(result.report.to_dict())
outputs = result.run({"x": image})          # keyed by ONNX output names, ONNX dtypes
```

Restrictions: every graph input dimension must be fixed (`free_dims` by `dim_param` name,
`input_shapes` by input name); inputs WebNN has no type for must be pinned (`pin_inputs`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx

from .errors import InvalidModel
from .formats.onnx import SourceGraph, ValueInfo, read_onnx
from .importer import ConversionReport, import_graph, webnn_dtype
from .webnn import MLGraph, MLOperandDescriptor


@dataclass(frozen=True, eq=False)
class ConversionResult:
    """A converted model.

    `graph` is the WebNN graph, `report` the conversion report, `inputs`/`outputs` the
    ONNX-side descriptions (ONNX dtypes such as "bool" or "float64", static shapes),
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
        """Run the graph. `inputs` are keyed by ONNX input name and use ONNX dtypes (bool,
        float64 are converted); inputs the graph does not use are accepted and ignored.
        Returns {ONNX output name: array in the ONNX dtype}, in graph output order."""
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


def convert(model: str | os.PathLike[str] | bytes | Any, free_dims: Mapping[str, int] | None = None,
            input_shapes: Mapping[str, Sequence[int]] | None = None,
            pin_inputs: Mapping[str, Any] | None = None, signature: str | None = None, *,
            fmt: str | None = None) -> ConversionResult:
    """Convert an ONNX model (path, bytes or ModelProto) or a TFLite model (path or bytes,
    recognised by its ``TFL3`` identifier or ``.tflite`` suffix) to a WebNN graph.

    `fmt` ("onnx" or "tflite") skips detection. Restrictions: `signature` applies to TFLite
    only; TFLite models have no named free dimensions (use `input_shapes`) and no pinning.
    Raises `InvalidModel` for options the format does not have, for unreadable/unsafe
    models and unresolved dimensions, and `ConversionFailed` (one error listing every node
    that could not be converted).
    """
    from .formats.detect import FORMATS, detect_format, model_label

    if isinstance(model, onnx.ModelProto):
        fmt = fmt or "onnx"
    fmt = fmt or detect_format(model)
    label = "<ModelProto>" if isinstance(model, onnx.ModelProto) else model_label(model)
    if fmt == "tflite":
        if free_dims:
            raise InvalidModel(f"{label}: TFLite models have no named free dimensions "
                               f"({', '.join(sorted(free_dims))}); fix dynamic dimensions "
                               "with input shapes (--shape INPUT=D1,D2,...)")
        if pin_inputs:
            raise InvalidModel(f"{label}: pinning inputs is only supported for ONNX models")
        from .api_tflite import convert_tflite

        return convert_tflite(model, signature=signature, input_shapes=input_shapes)
    if fmt != "onnx":
        raise InvalidModel(f"unknown model format {fmt!r} (known: {', '.join(FORMATS)})")
    if signature:
        raise InvalidModel(f"{label}: --signature applies to TFLite models only")
    return convert_onnx(model, free_dims=free_dims, input_shapes=input_shapes,
                        pin_inputs=pin_inputs)


def convert_onnx(model: str | os.PathLike[str] | bytes | Any,
                 free_dims: Mapping[str, int] | None = None,
                 input_shapes: Mapping[str, Sequence[int]] | None = None,
                 pin_inputs: Mapping[str, Any] | None = None) -> ConversionResult:
    """Convert an ONNX model (path, bytes or ModelProto) to a WebNN graph.

    Raises `InvalidModel` (unreadable/unsafe model, unresolved dimensions) or
    `ConversionFailed` (one error listing every node that could not be converted).
    """
    source = read_onnx(model, free_dims=free_dims, input_shapes=input_shapes,
                       pin_inputs=pin_inputs)
    result = import_graph(source)
    return ConversionResult(result.graph, result.report, result.inputs, result.outputs, source)
