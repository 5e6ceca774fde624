"""The ONNX front end's implementation (see `converter.frontends.base.Frontend.impl`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from converter.core.budgets import Budgets, using
from converter.core.errors import ConversionFailed, InvalidModel, UnresolvedDimensions
from converter.core.ir import SourceGraph
from converter.core.webnn import MLContext
from converter.frontends.base import ModelInfo, SourceRun
from converter.frontends.control_inputs import pin_fixes
from converter.frontends.free_dims import InputDims
from converter.frontends.onnx.importer import ONNXFrontEnd
from converter.frontends.onnx.inspect import inspect_onnx, proto_view, source_view
from converter.frontends.onnx.reader import load_proto, read_onnx
from converter.frontends.onnx.reference import run_onnx
from converter.frontends.onnx.state import state_pairs
from converter.importer import Importer, ImportObserver, ImportResult, Lookup
from converter.results.result import ConversionResult
from converter.results.state import state_notes

HOST_STEPS = True
"""Nodes of this format can run as host steps after the WebNN graph
(`converter.conversion.host_split`, docs/host-steps.md)."""


def accepts(model: Any) -> bool:
    """True for an in-memory `onnx.ModelProto`."""
    import onnx

    return isinstance(model, onnx.ModelProto)


def convert(model: str | os.PathLike[str] | bytes | Any, *, label: str = "model",
            free_dims: Mapping[str, int] | None = None,
            input_shapes: Mapping[str, Sequence[int]] | None = None,
            pin_inputs: Mapping[str, Any] | None = None,
            signature: str | None = None,
            input_dims: InputDims | None = None,
            budgets: Budgets | None = None) -> ConversionResult:
    """Convert an ONNX model (a path, bytes or an `onnx.ModelProto`; `label` names it in
    messages): read it (`reader.read_onnx`) and import it (`import_source`). `signature` is
    refused (ONNX models have none); `budgets` (default the active ones) bound what the
    model may ask for (`converter.core.budgets`).

    Errors carry fixes: `UnresolvedDimensions` the dimension settings plus pins for the
    shape/control inputs (`converter.frontends.control_inputs`); each node error of a
    `ConversionFailed` the pins of the shape/control inputs behind what it needed constant.
    """
    if signature:
        raise InvalidModel(f"{label}: signatures apply to TFLite models only")
    with using(budgets) as given:
        sized = given.for_source(_model_bytes(model))  # derived constants scale with it
        with using(sized) as active_budgets:
            return _convert(model, label, free_dims, input_shapes, pin_inputs, input_dims,
                            active_budgets)


def _model_bytes(model: Any) -> int:
    """The size of the model as given: its file, its bytes or its serialised proto (the
    base of the derived-constant budget; see `Budgets.for_source`)."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return len(model)
    if isinstance(model, (str, os.PathLike)):
        try:
            return os.stat(model).st_size
        except OSError:
            return 0
    try:
        return int(model.ByteSize())
    except Exception:  # noqa: BLE001 - not a proto: no size known
        return 0


def _convert(model: Any, label: str, free_dims: Mapping[str, int] | None,
             input_shapes: Mapping[str, Sequence[int]] | None,
             pin_inputs: Mapping[str, Any] | None, input_dims: InputDims | None,
             budgets: Budgets) -> ConversionResult:
    try:
        source = read_onnx(model, free_dims=free_dims, input_shapes=input_shapes,
                           pin_inputs=pin_inputs, input_dims=input_dims)
    except UnresolvedDimensions as exc:
        proto = load_proto(model)[0]
        pinned = set(pin_inputs or {})
        exc.add_fixes(c.fix for c in proto_view(proto).control_inputs()
                      if c.name not in pinned)
        raise
    weights = sum(int(getattr(v, "nbytes", 0)) for v in source.constants.values())
    if budgets.source_bytes is not None and weights > budgets.source_bytes:
        budgets = budgets.for_source(weights)  # external data: the weights are the model
    try:
        result = import_source(source, budgets=budgets)
    except ConversionFailed as exc:
        dtypes = {vi.name: vi.dtype for vi in source.inputs}
        for index, fixes in pin_fixes(source_view(source), exc.errors, dtypes).items():
            err = exc.errors[index]
            if not isinstance(err, InvalidModel) or err.inner:  # pinning mends no bad node
                err.add_fixes(fixes)  # (but may skip the subgraph a bad inner node is in)
        raise
    pairs = state_pairs(result.graph, result.inputs, result.outputs)
    result.report.warnings.extend(state_notes(pairs))
    return ConversionResult(result.graph, result.report, result.inputs, result.outputs, source,
                            state=pairs)


def run_reference(model: Any, source: Any, inputs: Mapping[str, np.ndarray], *,
                  intermediates: bool = False, threads: int = 0) -> SourceRun:
    """Run the original in onnxruntime (see `converter.frontends.onnx.reference`)."""
    return run_onnx(model, source, inputs, intermediates=intermediates, threads=threads)


def inspect(model: str | os.PathLike[str] | bytes, *, label: str,
            signature: str | None = None) -> ModelInfo:
    """Describe an ONNX model without converting it; `signature` is refused."""
    if signature:
        raise InvalidModel(f"{label}: signatures apply to TFLite models only")
    return inspect_onnx(model)


def import_source(source: SourceGraph, *, lookup: Lookup | None = None,
                  context: MLContext | None = None, observer: ImportObserver | None = None,
                  budgets: Budgets | None = None) -> ImportResult:
    """Import an ONNX `SourceGraph` (as `read_onnx` gives it) with the ONNX op registry (or
    `lookup`) through the importer loop, watched by `observer`, within `budgets` (default
    the active ones)."""
    if lookup is None:
        from op_mappings.onnx import lookup as onnx_lookup

        lookup = onnx_lookup
    return Importer(source, ONNXFrontEnd(source), lookup, context, observer=observer,
                    budgets=budgets).run()
