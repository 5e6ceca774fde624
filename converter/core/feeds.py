"""Feeding source-side values to a converted graph and reading its outputs back.

A converted model keeps its source-side descriptions (`converter.core.ir.ValueInfo`: the source
dtype, e.g. "bool" or "float64"); inside the graph such values travel in their WebNN carrier
type (`converter.core.webnn.dtypes.carrier_type`: bool -> uint8, float64 -> float32). These are
the only functions that convert between the two: `ConversionResult.run` / `CompiledModel.run`
(`converter.results.compiled`, which hands a value that needs no conversion to the backend
without calling them), validation and the benchmarks all go through them.

A graph lowered for a target without 64-bit integers (`converter.passes.targets`, rule narrow-int64)
takes int32 / uint32 where the source has int64 / uint64 (`MLGraph.narrowed_inputs` /
`narrowed_outputs` record it): `graph_feeds` converts such inputs after checking every value
fits (`InvalidModel` naming the input and the first value that does not), `source_outputs`
converts such outputs back to the source type. Likewise a graph input or output of an integer
type a target lacks, carried in a wider one (rule widen-io: int8 given as int32): the values
are converted to the wider type and back.

A graph loaded from an export (`converter.load`) has no source-side descriptions: its
`narrowed_inputs` / `narrowed_outputs` (read back from the export's `sourceDataTypes`) give
the caller-side types, and `loaded_feeds` / `loaded_outputs` convert through them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.webnn.dtypes import CARRIER_TYPES, NARROWED_TYPES, carrier_type


def source_array(value: Any, dtype: str) -> np.ndarray:
    """`value` as an array of source data type `dtype` (no copy when it already is one)."""
    return np.asarray(value, dtype=dtype)


def graph_value(value: Any, dtype: str, graph_type: str | None = None, name: str = ""
                ) -> np.ndarray:
    """A source-side value of source data type `dtype` as the graph takes it: cast to the
    source dtype first (so that e.g. 0.5 fed to a bool input is True), then to its WebNN
    carrier type (no copy when nothing changes). `graph_type`, the type of the graph's input
    (`name`), may be the narrowed type of a 64-bit one (`NARROWED_TYPES`): the values are
    then checked to fit it and converted."""
    arr = source_array(value, dtype)
    carried = carrier_type(dtype) or dtype
    if graph_type is not None and graph_type != carried and \
            NARROWED_TYPES.get(carried) == graph_type:
        return narrowed_value(arr, graph_type, name)
    if graph_type is not None and graph_type != carried and _holds(graph_type, carried):
        return arr.astype(carried, copy=False).astype(graph_type)  # widened input
    return arr.astype(carried, copy=False)


def _holds(wide: str, narrow: str) -> bool:
    """Whether integer type `wide` holds every value of integer type `narrow` (a graph input
    or output a target carries in a wider type: `converter.passes.targets`, rule widen-io)."""
    try:
        w, n = np.dtype(wide), np.dtype(narrow)
    except TypeError:  # a source type numpy does not know (bfloat16, string)
        return False
    return w.kind in "iu" and n.kind in "iu" and np.can_cast(n, w, "safe")


def narrowed_value(arr: np.ndarray, narrow: str, name: str = "") -> np.ndarray:
    """`arr` (int64 / uint64) as `narrow` (int32 / uint32) after checking every value fits;
    `InvalidModel` naming input `name` and the first value that does not."""
    info = np.iinfo(np.dtype(narrow))
    bad = (arr < info.min) | (arr > info.max)
    if bad.any():
        value = arr[bad].flat[0]
        raise InvalidModel(f"input {name!r}: value {value} does not fit {narrow} "
                           f"[{info.min}, {info.max}]; the graph takes {narrow} there (it was "
                           f"narrowed from {arr.dtype.name} for a target without it)")
    return arr.astype(narrow)


def graph_feeds(graph: Any, input_infos: Iterable[Any], inputs: Mapping[str, Any]
                ) -> dict[str, np.ndarray]:
    """The inputs of `graph` (an `MLGraph`) from source-side values keyed by source input
    name: one `graph_value` per input the graph takes (inputs the graph does not use, e.g.
    folded empty tensors, are left out). `input_infos` are the source-side descriptions
    (objects with `name` and `dtype`)."""
    return {vi.name: graph_value(inputs[vi.name], vi.dtype,
                                 graph.inputs[vi.name].data_type, vi.name)
            for vi in input_infos if vi.name in graph.inputs}


def source_outputs(output_infos: Iterable[Any], values: Mapping[str, Any]
                   ) -> dict[str, np.ndarray]:
    """Graph outputs back in their source data types (uint8 -> bool, float32 -> float64 for
    outputs the source declares so, int32 -> int64 and uint32 -> uint64 for narrowed ones,
    int32 -> int8 for widened ones),
    keyed by source output name in `output_infos` order."""
    out: dict[str, np.ndarray] = {}
    for vi in output_infos:
        arr = np.asarray(values[vi.name])
        if (vi.dtype in CARRIER_TYPES or NARROWED_TYPES.get(vi.dtype) == arr.dtype.name
                or _holds(arr.dtype.name, vi.dtype)) and arr.dtype != np.dtype(vi.dtype):
            arr = arr.astype(vi.dtype)
        out[vi.name] = arr
    return out


def loaded_feeds(graph: Any, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The inputs of `graph` (an `MLGraph`, e.g. loaded from an export) from caller-side
    values keyed by input name: a narrowed / widened input (`graph.narrowed_inputs`) takes
    its caller-side type (int64 values range-checked, `InvalidModel` naming the input and the
    first value that does not fit), any other input the graph's own type (a plain cast)."""
    return {name: graph_value(inputs[name], graph.narrowed_inputs.get(name, op.data_type),
                              op.data_type, name)
            for name, op in graph.inputs.items()}


def loaded_outputs(graph: Any, values: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The outputs of `graph` (an `MLGraph`) in their caller-side types: narrowed / widened
    ones (`graph.narrowed_outputs`) converted back (int32 -> int64), others unchanged."""
    return {name: np.asarray(v).astype(graph.narrowed_outputs[name])
            if name in graph.narrowed_outputs else np.asarray(v)
            for name, v in values.items()}
