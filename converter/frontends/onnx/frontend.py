"""The ONNX front end's implementation (see `converter.frontends.base.Frontend.impl`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...errors import InvalidModel
from ...result import ConversionResult
from ..base import ModelInfo, SourceRun
from .importer import ONNXImporter, convert_onnx
from .inspect import inspect_onnx
from .reference import run_onnx


def accepts(model: Any) -> bool:
    """True for an in-memory `onnx.ModelProto`."""
    import onnx

    return isinstance(model, onnx.ModelProto)


def convert(model: str | os.PathLike[str] | bytes | Any, *, label: str,
            free_dims: Mapping[str, int] | None = None,
            input_shapes: Mapping[str, Sequence[int]] | None = None,
            pin_inputs: Mapping[str, Any] | None = None,
            signature: str | None = None) -> ConversionResult:
    """Convert an ONNX model; `signature` is refused (ONNX models have none)."""
    if signature:
        raise InvalidModel(f"{label}: --signature applies to TFLite models only")
    return convert_onnx(model, free_dims=free_dims, input_shapes=input_shapes,
                        pin_inputs=pin_inputs)


def run_reference(model: Any, source: Any, inputs: Mapping[str, np.ndarray], *,
                  intermediates: bool = False, threads: int = 0) -> SourceRun:
    """Run the original in onnxruntime (see `converter.frontends.onnx.reference`)."""
    return run_onnx(model, source, inputs, intermediates=intermediates, threads=threads)


def inspect(model: str | os.PathLike[str] | bytes, *, label: str,
            signature: str | None = None) -> ModelInfo:
    """Describe an ONNX model without converting it; `signature` is refused."""
    if signature:
        raise InvalidModel(f"{label}: --signature applies to TFLite models only")
    return inspect_onnx(model)


def importer_class() -> type[ONNXImporter]:
    """The importer ONNX graphs are converted with."""
    return ONNXImporter
