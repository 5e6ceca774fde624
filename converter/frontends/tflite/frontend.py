"""The TFLite front end's implementation (see `converter.frontends.base.Frontend.impl`).

```python
from converter.frontends.tflite.frontend import convert
result = convert("model.tflite")                                # main subgraph, tensor names
result = convert("model.tflite", signature="serving_default")   # signature aliases
outputs = result.run({"serving_default_x:0": image})
```

Inputs/outputs are keyed by the tensor names LiteRT's `get_input_details()` /
`get_output_details()` report, or by the SignatureDef aliases when `signature` is given; the
order is the subgraph's. int8/uint8 quantized graph inputs and outputs stay int8/uint8.

Control flow is resolved at conversion time: WHILE loops whose condition folds to a constant
are unrolled (at most `max_while_iterations`, default 4096, iterations), IF with a constant
condition is inlined (otherwise both branches are converted and selected with `where`),
CALL_ONCE init subgraphs run once and resource variables (VAR_HANDLE / READ_VARIABLE /
ASSIGN_VARIABLE) hold their values for one invocation; variables that carry state to the
next invocation become extra graph inputs and outputs recorded as `ConversionResult.state`
(`state.carried_variables`, docs/state.md); STABLEHLO_COMPOSITE inlines its decomposition
subgraph.

Restrictions: dynamic (-1) input dimensions are converted at their stored size unless
`input_dims` / `input_shapes` set them (see `reader`; a graph those sizes make invalid fails
with node errors that name the `input_dims` settings); loops whose trip count depends on
graph inputs, and dynamic-shape builtins are not supported (see op_mappings/tflite/);
variable updates inside WHILE / IF bodies are not carried across invocations. The handler settings
(`convert(settings=...)`, not options of `converter.convert()`): `fold_fp16=True` folds
float16 weights behind DEQUANTIZE into float32 constants instead of keeping float16
constants and a cast; `max_while_iterations` bounds WHILE unrolling.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from converter.core.budgets import Budgets, using
from converter.core.errors import ConversionError, ConversionFailed, InvalidModel
from converter.core.webnn import MLContext
from converter.frontends.base import ModelInfo, SourceRun
from converter.frontends.free_dims import (
    MAX_SEARCHED_NODES,
    SEARCHED_SIZES,
    InputDims,
    fix_settings,
    merged_dims,
)
from converter.frontends.tflite.importer import TFLiteFrontEnd
from converter.frontends.tflite.inputs import stored_size_fixes
from converter.frontends.tflite.inspect import inspect_tflite
from converter.frontends.tflite.reader import read_tflite
from converter.frontends.tflite.records import TFLiteSourceGraph
from converter.frontends.tflite.reference import run_tflite
from converter.frontends.tflite.sizing import size_tflite
from converter.frontends.tflite.state import (
    CARRIED_SETTING,
    CarriedState,
    carried_variables,
)
from converter.importer import Importer, ImportObserver, ImportResult, Lookup
from converter.results.result import ConversionResult
from converter.results.state import state_notes


def accepts(model: Any) -> bool:
    """TFLite models are given as paths or bytes only."""
    return False


def convert(model: str | os.PathLike[str] | bytes, *, label: str = "model",
            free_dims: Mapping[str, int] | None = None,
            input_shapes: Mapping[str, Sequence[int]] | None = None,
            pin_inputs: Mapping[str, Any] | None = None,
            signature: str | None = None,
            input_dims: InputDims | None = None,
            budgets: Budgets | None = None,
            settings: Mapping[str, Any] | None = None) -> ConversionResult:
    """Convert a TFLite model (a path or bytes; `label` names it in messages): read it
    (`reader.read_tflite`; `input_dims` and `input_shapes` set its dynamic dimensions), size
    it and import it (`import_source`) within `budgets` (`converter.core.budgets`, default
    the active ones; they also bound the reader's densified sparse tensors). `settings` are
    the handler settings (see the module docstring).

    TFLite has no named free dimensions (its dynamic dimensions are set by input and axis,
    `input_dims`) and no pinning: `free_dims` and `pin_inputs` are refused. Raises
    `InvalidModel` (unreadable model, unknown signature, unresolved dimensions) or
    `ConversionFailed` (one error listing every operator that could not be converted).
    """
    if free_dims:
        raise InvalidModel(f"{label}: TFLite models have no named free dimensions "
                           f"({', '.join(sorted(free_dims))}); their dynamic (-1) "
                           "dimensions are set by input and axis, or as whole input shapes",
                           hint="set them with input_dims or input_shapes")
    if pin_inputs:
        raise InvalidModel(f"{label}: pinning inputs is only supported for ONNX models")
    with using(budgets) as given, using(given.for_source(_model_bytes(model))) as active_budgets:
        source: TFLiteSourceGraph = read_tflite(
            model, signature=signature, input_shapes=input_shapes, input_dims=input_dims,
            settings={"fold_fp16": False, **(settings or {})})
        parsed = source.model
        size_tflite(source.nodes, parsed.subgraphs if parsed is not None else (),
                    parsed.label if parsed is not None else "model", active_budgets)
        carried = carried_variables(source)
        try:
            result = import_source(_with_state(source, carried), budgets=active_budgets)
        except ConversionFailed as exc:

            def converts_at(dims: InputDims) -> bool:
                try:
                    trial = read_tflite(model, signature=signature, input_shapes=input_shapes,
                                        input_dims=merged_dims(input_dims, dims),
                                        settings={"fold_fp16": False, **(settings or {})})
                    import_source(_with_state(trial, carried_variables(trial)),
                                  budgets=active_budgets)
                except ConversionError:  # not at this size (or over budget: no suggestion)
                    return False
                return True

            _suggest_sizes(exc, source, converts_at)
            raise
    result.report.warnings.extend([*carried.notes, *state_notes(carried.pairs)])
    own_in = {vi.name for vi in source.inputs}
    own_out = {vi.name for vi in source.outputs}
    return ConversionResult(result.graph, result.report,
                            tuple(vi for vi in result.inputs if vi.name in own_in),
                            tuple(vi for vi in result.outputs if vi.name in own_out), source,
                            state=carried.pairs)


_SHAPE_SENSITIVE = frozenset({"spec_violation", "invalid_model", "requires_constant_input",
                              "internal_error"})
"""Node errors that other input sizes may mend."""


def _with_state(source: TFLiteSourceGraph, carried: CarriedState) -> TFLiteSourceGraph:
    """`source` with the carried variables' state inputs and outputs (as is without any)."""
    if not carried.pairs:
        return source
    return dataclasses.replace(
        source, inputs=source.inputs + carried.inputs, outputs=source.outputs + carried.outputs,
        settings=MappingProxyType({**source.settings, CARRIED_SETTING: carried.setting}))


def _suggest_sizes(exc: ConversionFailed, source: TFLiteSourceGraph,
                   converts_at: Callable[[InputDims], bool]) -> None:
    """Name the `input_dims` settings on the node errors of a graph converted at stored
    sizes of dynamic dimensions (an input [-1, -1] stored as [1, 1] gives a convolution an
    invalid output width): the sizes were the model's, not the user's choice. When every
    error is one that sizes may mend and the model has at most `MAX_SEARCHED_NODES`
    operators, the settings carry the smallest power of two (`SEARCHED_SIZES`, the same for
    every such dimension) at which the graph converts (`converts_at`), else a placeholder."""
    if not source.stored_dims:
        return
    fixes = stored_size_fixes(source.inputs, source.stored_dims)
    used = ", ".join(f"{f.name}[{f.axis}]={f.value}" for f in source.stored_dims)
    why = (f"the dynamic (-1) input dimensions were converted at their stored sizes ({used}), "
           "which may not suit this graph")
    open_fixes = [f for f in fixes if f.value is None and f.axis is not None]
    if open_fixes and len(source.nodes) <= MAX_SEARCHED_NODES \
            and all(e.reason_code in _SHAPE_SENSITIVE for e in exc.errors):
        found = next((size for size in SEARCHED_SIZES if converts_at(fix_settings(
            [dataclasses.replace(f, value=size) for f in open_fixes])[1])), None)
        if found is not None:
            fixes = tuple(dataclasses.replace(f, value=found) if f in open_fixes else f
                          for f in fixes)
            why += f"; {found} is the smallest power of two at which it converts"
    for err in exc.errors:
        if err.reason_code in _SHAPE_SENSITIVE:
            err.hint = f"{err.hint}; {why}" if err.hint else why
            err.add_fixes(fixes)
    exc.args = (exc._text("python"),)
    exc.message = exc.args[0]


def _model_bytes(model: str | os.PathLike[str] | bytes) -> int:
    """The size of the model file or bytes (the base of the derived-constant budget:
    `converter.core.budgets.Budgets.for_source`)."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return len(model)
    try:
        return os.stat(model).st_size
    except (OSError, TypeError, ValueError):
        return 0


def import_source(source: TFLiteSourceGraph, *, lookup: Lookup | None = None,
                  context: MLContext | None = None, observer: ImportObserver | None = None,
                  budgets: Budgets | None = None) -> ImportResult:
    """Import a TFLite `SourceGraph` (as `read_tflite` gives it) with the TFLite op registry
    (or `lookup`) through the importer loop, watched by `observer`, within `budgets`
    (default the active ones); handlers see the settings it was read with."""
    if lookup is None:
        from op_mappings.tflite import lookup as tflite_lookup

        lookup = tflite_lookup
    return Importer(source, TFLiteFrontEnd(source), lookup, context,
                    settings=source.settings, observer=observer, budgets=budgets).run()


def run_reference(model: Any, source: Any, inputs: Mapping[str, np.ndarray], *,
                  intermediates: bool = False, threads: int = 0) -> SourceRun:
    """Run the original in the LiteRT interpreter (see
    `converter.frontends.tflite.reference`)."""
    return run_tflite(model, source, inputs, intermediates=intermediates, threads=threads)


def inspect(model: str | os.PathLike[str] | bytes, *, label: str,
            signature: str | None = None) -> ModelInfo:
    """Describe a TFLite model without converting it."""
    return inspect_tflite(model, signature)
