"""`convert()`: a model file -> a WebNN graph (re-exported by `converter.api`).

```python
import converter
result = converter.convert("model.onnx", free_dims={"batch": 1})
result = converter.convert("model.onnx", input_dims={"x": {0: 1}})   # an unnamed dimension
print(result.report.to_dict())
outputs = result.run({"x": image})          # keyed by source output names, source dtypes
```

The model's format is detected by content (`converter.frontends.detect`) and the matching
front end (`converter.frontends`) reads and imports it. Restrictions: every graph input
dimension must be fixed (`free_dims` by symbolic name, `input_dims` by input name and axis,
`input_shapes` whole shapes by input name; a front end fills some in itself: a free batch
dimension at 1 with a report note, TFLite -1 dimensions at the size LiteRT runs them); inputs WebNN has no type for, and inputs that
decide shapes or control flow, must be pinned (`pin_inputs`); each front end accepts only the
options its format has (`Frontend.options`). Errors name the settings that fix them
(`ConversionError.fixes`; `str(error)` spells them as these keyword arguments).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from converter.conversion.host_split import split_convert, with_boundary_casts
from converter.conversion.size_search import Settings, merged_dims, suggest_sizes
from converter.core.budgets import Budgets, out_of_memory, using
from converter.core.confine import allowed_roots
from converter.core.errors import ConversionError, ConversionFailed, UnresolvedDimensions
from converter.frontends import get
from converter.frontends.detect import detect_format, model_label
from converter.passes.framework import Pass, apply_passes
from converter.passes.precision import PRECISION_PASSES, check_precision
from converter.passes.targets import DEFAULT_TARGET, Target, load_target
from converter.passes.targets.check import check_graph, limit_notes
from converter.passes.targets.passes import target_passes
from converter.results.result import ConversionResult

__all__ = ["conversion_passes", "convert"]


def convert(model: str | os.PathLike[str] | bytes | Any, free_dims: Mapping[str, int] | None = None,
            input_shapes: Mapping[str, Sequence[int]] | None = None,
            pin_inputs: Mapping[str, Any] | None = None, signature: str | None = None, *,
            input_dims: Mapping[str, Mapping[int, int]] | None = None,
            fmt: str | None = None,
            allow_roots: Iterable[str | os.PathLike[str]] | None = None,
            budgets: Budgets | None = None,
            target: str | os.PathLike[str] | Target | None = None,
            precision: str = "float32") -> ConversionResult:
    """Convert a model (a path, the file's bytes, or an in-memory model object a front end
    accepts, such as an `onnx.ModelProto`) to a WebNN graph.

    `input_dims` ({input: {axis: size}}) sets single dimensions (unnamed ones, a TFLite -1).
    `fmt` (a front-end name, e.g. "onnx" or "tflite") skips detection. Raises `InvalidModel`
    for options the format does not have, for unreadable/unsafe models and unresolved
    dimensions, and `ConversionFailed` (one error listing every node that could not be
    converted).

    Files the model refers to (ONNX external data) must lie inside the model's folder once
    symlinks are resolved, or inside one of `allow_roots` (`PathOutsideFolder` otherwise;
    see `converter.core.confine`).

    `budgets` (`converter.core.budgets.Budgets`, default the active ones) bound the memory and
    work the model may ask for: `BudgetExceeded` names the budget a model goes over (a
    MemoryError becomes one too).

    `target` (a name such as "chromium-tflite", an `opSupportLimits()` JSON file or a
    `converter.passes.targets.Target`) rewrites the graph around that implementation's deviations
    (`converter.passes.targets.passes`); each rewrite is named in the report's warnings. The
    default (None: `converter.passes.targets.DEFAULT_TARGET`, "portable") is what every
    shipped profile supports (the graph builds in each);
    "spec" leaves the graph as the WebNN specification allows it. The report names the target
    (`ConversionReport.target`) and what the graph still uses outside its limits
    (`ConversionReport.outside_target`, also warnings).

    An ONNX model whose tail has data-dependent shapes (NonZero, NonMaxSuppression, TopK
    with a run-time k, ...) converts to one WebNN graph plus host steps (`result.host`;
    `converter.conversion.host_split`, docs/host-steps.md), named in the report
    (`ConversionReport.host_steps`); `run` runs both.

    `precision="float16"` stores the float32 weights and computes the float32 operations in
    float16, keeping the float32 inputs and outputs (casts at the boundary; see
    `converter.passes.precision`, whose notes go to the report's warnings); it runs before
    `target`'s rewrites. "float32" (the default) leaves the graph as converted.
    """
    check_precision(precision)  # a bad value fails first
    chosen = load_target(target if target is not None else DEFAULT_TARGET)
    with allowed_roots(allow_roots), using(budgets) as active_budgets:
        try:
            result, boundary = _convert(model, fmt, free_dims=free_dims,
                                        input_dims=input_dims, input_shapes=input_shapes,
                                        pin_inputs=pin_inputs, signature=signature,
                                        budgets=active_budgets)
        except MemoryError:
            raise out_of_memory(active_budgets) from None
    converted = apply_passes(_typed_outputs(result), conversion_passes(precision, chosen))
    if converted.host is not None:  # the host steps read the source types
        converted = with_boundary_casts(converted, boundary)
    converted.report.target = chosen.name
    converted.report.outside_target = limit_notes(check_graph(converted.graph, chosen)) \
        if chosen.limits else []
    return converted


def _typed_outputs(result: ConversionResult) -> ConversionResult:
    """`result` with every output the source declares no data type for ("unknown") typed as
    the imported graph computes it, before the target's rules may carry it in a wider type:
    callers get that type back from `run`."""
    outputs = tuple(dataclasses.replace(vi, dtype=result.graph.outputs[vi.name].data_type)
                    if vi.dtype == "unknown" and vi.name in result.graph.outputs else vi
                    for vi in result.outputs)
    if outputs == result.outputs:
        return result
    return dataclasses.replace(result, outputs=outputs)


def conversion_passes(precision: str, target: Target | None) -> tuple[Pass, ...]:
    """The graph passes `convert` runs on an imported graph, in order: `precision`'s
    (`converter.passes.precision.PRECISION_PASSES`), then `target`'s
    (`converter.passes.targets.passes.target_passes`: its rewrite rules, then its limits
    check). Raises InvalidModel for an unknown precision."""
    return (*PRECISION_PASSES[check_precision(precision)],
            *(target_passes(target) if target is not None else ()))


def _convert(model: Any, fmt: str | None, **options: Any
             ) -> tuple[ConversionResult, dict[str, str]]:
    """The imported model and, for one with host steps, {boundary value: source dtype}.
    Unresolved dimensions the model implies no size for get a searched one in the error's
    fixes (`converter.conversion.size_search`: each try is an `_import` of the same format)."""
    if fmt is None:
        fmt = detect_format(model) if isinstance(model, (str, os.PathLike, bytes, bytearray)) \
            else _in_memory_format(model)
    try:
        return _import(model, fmt, **options)
    except UnresolvedDimensions as exc:
        if exc.node_count is not None:

            def converts(settings: Settings) -> bool:
                free, dims = settings
                try:
                    _import(model, fmt, **{
                        **options, "free_dims": {**(options.get("free_dims") or {}), **free},
                        "input_dims": merged_dims(options.get("input_dims"), dims)})
                except ConversionError:
                    return False
                return True

            suggest_sizes(exc, exc.declared, exc.node_count, converts)
        raise


def _import(model: Any, fmt: str, **options: Any) -> tuple[ConversionResult, dict[str, str]]:
    """Read and import `model` with front end `fmt`; a conversion that fails only on
    data-dependent nodes becomes a graph plus host steps (`split_convert`)."""
    frontend = get(fmt)
    label = model_label(model) if isinstance(model, (str, os.PathLike, bytes, bytearray)) \
        else f"<{type(model).__name__}>"
    given = {k: v for k, v in options.items() if v}
    try:
        return frontend.impl().convert(model, label=label, **given), {}
    except ConversionFailed as failed:
        if not getattr(frontend.impl(), "HOST_STEPS", False):  # ONNX nodes only
            raise
        return split_convert(model, failed, given)


def _in_memory_format(model: Any) -> str:
    """The front end that accepts an in-memory model object (each implementation module's
    `accepts(obj)`)."""
    from converter.core.errors import InvalidModel
    from converter.frontends import registered

    for fe in registered().values():
        if fe.impl().accepts(model):
            return fe.name
    raise InvalidModel(f"convert: cannot read a {type(model).__name__} (give a path or bytes)")
