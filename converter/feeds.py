"""Feeding source-side values to a converted graph and reading its outputs back.

A converted model keeps its source-side descriptions (`converter.ir.ValueInfo`: the source
dtype, e.g. "bool" or "float64"); inside the graph such values travel in their WebNN carrier
type (`converter.webnn.dtypes.carrier_type`: bool -> uint8, float64 -> float32). These are
the only functions that convert between the two: `ConversionResult.run`, validation and the
benchmarks all go through them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .webnn.dtypes import CARRIER_TYPES, carrier_type


def source_array(value: Any, dtype: str) -> np.ndarray:
    """`value` as an array of source data type `dtype` (no copy when it already is one)."""
    return np.asarray(value, dtype=dtype)


def graph_value(value: Any, dtype: str) -> np.ndarray:
    """A source-side value of source data type `dtype` as the graph takes it: cast to the
    source dtype first (so that e.g. 0.5 fed to a bool input is True), then to its WebNN
    carrier type (no copy when nothing changes)."""
    arr = source_array(value, dtype)
    return arr.astype(carrier_type(dtype) or dtype, copy=False)


def graph_feeds(graph: Any, input_infos: Iterable[Any], inputs: Mapping[str, Any]
                ) -> dict[str, np.ndarray]:
    """The inputs of `graph` (an `MLGraph`) from source-side values keyed by source input
    name: one `graph_value` per input the graph takes (inputs the graph does not use, e.g.
    folded empty tensors, are left out). `input_infos` are the source-side descriptions
    (objects with `name` and `dtype`)."""
    return {vi.name: graph_value(inputs[vi.name], vi.dtype)
            for vi in input_infos if vi.name in graph.inputs}


def source_outputs(output_infos: Iterable[Any], values: Mapping[str, Any]
                   ) -> dict[str, np.ndarray]:
    """Graph outputs back in their source data types (uint8 -> bool, float32 -> float64 for
    outputs the source declares so), keyed by source output name in `output_infos` order."""
    out: dict[str, np.ndarray] = {}
    for vi in output_infos:
        arr = np.asarray(values[vi.name])
        if vi.dtype in CARRIER_TYPES and arr.dtype != np.dtype(vi.dtype):
            arr = arr.astype(vi.dtype)
        out[vi.name] = arr
    return out
