"""The format-neutral source IR that every front end produces and the importer walks.

A front end (converter/frontends/<format>/) reads a model file into a `SourceGraph`: nodes in
topological order (op type, domain, version, attributes with the format's defaults filled in,
input/output value names), graph inputs/outputs with static shapes, and constants as numpy
arrays. Per-tensor details a front end knows (stored shape, quantization, sparsity) travel
on each node as `TensorInfo` records. Nothing here knows a file format: a front end may
subclass `SourceGraph` to carry whole-model details, and `source_format` is only a label (the
front end's registry name) for reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

Dim = int | str | None
"""A declared dimension: an int, a symbolic name, or None (unknown)."""


@dataclass(frozen=True)
class ValueInfo:
    """A graph input or output. `shape` is None when the rank is unknown; a dimension is an
    int, a symbolic name, or None (unknown). Inputs of a `SourceGraph` have only int dims;
    `declared_shape` keeps what the model said."""

    name: str
    dtype: str
    shape: tuple[Dim, ...] | None
    declared_shape: tuple[Dim, ...] | None = None


@dataclass(frozen=True, eq=False)
class Quantization:
    """Quantization parameters of a tensor: real = scale * (q - zero_point), per axis along
    `axis` when `scale` has more than one entry. `details` names a quantization scheme the
    record does not describe (e.g. TFLite's `QuantizationDetails` union member); then scale and
    zero_point may be meaningless. Arrays are read-only."""

    scale: np.ndarray
    zero_point: np.ndarray
    axis: int = 0
    details: str | None = None

    @property
    def per_axis(self) -> bool:
        return self.scale.size > 1

    def same_as(self, other: Quantization | None) -> bool:
        """Same axis, scales and zero points (`details` is not compared)."""
        return (other is not None and self.axis == other.axis
                and np.array_equal(self.scale, other.scale)
                and np.array_equal(self.zero_point, other.zero_point))


@dataclass(frozen=True, eq=False)
class SparseDimension:
    """One level of a sparse tensor: "dense" (`dense_size` entries) or "csr" (`segments`,
    `indices`)."""

    format: str
    dense_size: int = 0
    segments: np.ndarray | None = None
    indices: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class Sparsity:
    """How a sparse constant is stored: the traversal order of its dimensions (block
    dimensions last), which dimension each block dimension splits (`block_map`) and one
    `SparseDimension` per traversed dimension."""

    traversal_order: tuple[int, ...]
    block_map: tuple[int, ...]
    dimensions: tuple[SparseDimension, ...]


_QUANTIZED_DTYPES = frozenset({"int8", "uint8", "int16", "int32", "int64", "int4", "uint4"})


@dataclass(frozen=True, eq=False)
class TensorInfo:
    """One tensor as the source file stores it. `name` is the value name used in the
    SourceGraph (unique), `tensor_name` the name stored in the file, `index` its position in
    its graph's tensor list. `shape` is the stored shape; `shape_signature` has -1 for dynamic
    dims (None when the file has none); `has_rank` False with an empty shape means unknown
    rank; `buffer` the file's data-buffer index (0: no data)."""

    index: int
    name: str
    tensor_name: str
    dtype: str
    shape: tuple[int, ...]
    shape_signature: tuple[int, ...] | None
    has_rank: bool
    buffer: int
    quant: Quantization | None = None
    sparsity: Sparsity | None = None
    is_variable: bool = False

    @property
    def quantized(self) -> bool:
        """True for integer tensors that carry scale/zero-point quantization."""
        return (self.quant is not None and self.quant.scale.size > 0
                and self.dtype in _QUANTIZED_DTYPES)


@dataclass(frozen=True, eq=False)
class Node:
    """One source operator. `domain` is "" for the format's default domain; `version` is the
    version handlers are looked up by (ONNX: the model's opset for the domain; TFLite: the
    operator-code version); `name` is the node's name or `<op_type>_<index>` when the model
    left it empty; `inputs` keeps "" for omitted optional inputs; `attrs` has the format's
    defaults filled in (strings decoded, tensors as numpy arrays, lists as tuples); `proto`
    is the front end's own record of the node (opaque outside that front end);
    `input_infos` / `output_infos` describe the input and output tensors when the front end
    records them (TFLite: one entry per input, None for an omitted one; ONNX: empty)."""

    op_type: str
    domain: str
    version: int
    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: Mapping[str, Any]
    index: int = 0
    proto: Any = field(default=None, repr=False, compare=False)
    input_infos: tuple[TensorInfo | None, ...] = ()
    output_infos: tuple[TensorInfo, ...] = ()

    def input(self, i: int) -> str:
        """Name of input i, or "" when omitted."""
        return self.inputs[i] if i < len(self.inputs) else ""


@dataclass(frozen=True, eq=False)
class SourceGraph:
    """The format-neutral view the importer walks. `source_format` names the front end that
    read it (a label for reports; nothing outside the front end branches on it); `functions`
    holds front-end-specific callable bodies keyed by (domain, name) (ONNX model-local
    functions); `base_dir` is the folder the model's side files live in (None in memory)."""

    name: str
    inputs: tuple[ValueInfo, ...]
    outputs: tuple[ValueInfo, ...]
    nodes: tuple[Node, ...]
    constants: Mapping[str, np.ndarray]
    opsets: Mapping[str, int]
    source_format: str = ""
    producer: str = ""
    warnings: tuple[str, ...] = field(default=())
    functions: Mapping[tuple[str, str], Any] = field(default_factory=dict)
    base_dir: Path | None = None
