"""The TFLite front end's implementation (see `converter.frontends.base.Frontend.impl`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from converter.core.budgets import Budgets
from converter.core.errors import InvalidModel
from converter.frontends.base import ModelInfo, SourceRun
from converter.frontends.free_dims import InputDims
from converter.frontends.tflite.importer import TFLiteImporter, convert_tflite
from converter.frontends.tflite.inspect import inspect_tflite
from converter.frontends.tflite.reference import run_tflite
from converter.results.result import ConversionResult


def accepts(model: Any) -> bool:
    """TFLite models are given as paths or bytes only."""
    return False


def convert(model: str | os.PathLike[str] | bytes, *, label: str,
            free_dims: Mapping[str, int] | None = None,
            input_shapes: Mapping[str, Sequence[int]] | None = None,
            pin_inputs: Mapping[str, Any] | None = None,
            signature: str | None = None,
            input_dims: InputDims | None = None,
            budgets: Budgets | None = None) -> ConversionResult:
    """Convert a TFLite model. TFLite has no named free dimensions (its dynamic dimensions are
    set by input and axis, `input_dims`) and no pinning; `budgets` (default the active ones)
    bound what the model may ask for (`converter.core.budgets`)."""
    if free_dims:
        raise InvalidModel(f"{label}: TFLite models have no named free dimensions "
                           f"({', '.join(sorted(free_dims))}); their dynamic (-1) "
                           "dimensions are set by input and axis, or as whole input shapes",
                           hint="set them with input_dims or input_shapes")
    if pin_inputs:
        raise InvalidModel(f"{label}: pinning inputs is only supported for ONNX models")
    return convert_tflite(model, signature=signature, input_shapes=input_shapes,
                          input_dims=input_dims, budgets=budgets)


def run_reference(model: Any, source: Any, inputs: Mapping[str, np.ndarray], *,
                  intermediates: bool = False, threads: int = 0) -> SourceRun:
    """Run the original in the LiteRT interpreter (see
    `converter.frontends.tflite.reference`)."""
    return run_tflite(model, source, inputs, intermediates=intermediates, threads=threads)


def inspect(model: str | os.PathLike[str] | bytes, *, label: str,
            signature: str | None = None) -> ModelInfo:
    """Describe a TFLite model without converting it."""
    return inspect_tflite(model, signature)


def importer_class() -> type[TFLiteImporter]:
    """The importer TFLite graphs are converted with."""
    return TFLiteImporter
