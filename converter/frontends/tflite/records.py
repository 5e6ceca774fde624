"""The records the TFLite reader produces: per-tensor details (`TensorInfo` with
quantization `QuantInfo` and sparsity `SparsityInfo`), operators (`TFLiteNode`), subgraphs,
signatures, the whole model (`TFLiteModel`) and the `TFLiteSourceGraph` the importer walks.
All are frozen; arrays in them are read-only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from converter.core.ir import Node, SourceGraph


@dataclass(frozen=True, eq=False)
class QuantInfo:
    """Quantization parameters: real = scale * (q - zero_point); per-axis along
    `quantized_dimension` when `scale` has more than one entry. `details` names the
    `QuantizationDetails` union member when the file uses one (then scale/zero_point may be
    meaningless)."""

    scale: np.ndarray
    zero_point: np.ndarray
    quantized_dimension: int = 0
    details: str | None = None

    @property
    def per_axis(self) -> bool:
        return self.scale.size > 1

    def same_as(self, other: QuantInfo | None) -> bool:
        return (other is not None and self.quantized_dimension == other.quantized_dimension
                and np.array_equal(self.scale, other.scale)
                and np.array_equal(self.zero_point, other.zero_point))


@dataclass(frozen=True, eq=False)
class DimMeta:
    """One level of a sparse tensor: DENSE (`dense_size`) or SPARSE_CSR (`segments`,
    `indices`)."""

    format: str
    dense_size: int = 0
    segments: np.ndarray | None = None
    indices: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class SparsityInfo:
    traversal_order: tuple[int, ...]
    block_map: tuple[int, ...]
    dim_metadata: tuple[DimMeta, ...]


@dataclass(frozen=True, eq=False)
class TensorInfo:
    """One tensor of a subgraph. `name` is the value name used in the SourceGraph (unique),
    `tensor_name` the name stored in the file. `shape` is the stored shape; `shape_signature`
    has -1 for dynamic dims (None when the file has none); `has_rank` False with an empty
    shape means unknown rank."""

    index: int
    name: str
    tensor_name: str
    dtype: str
    shape: tuple[int, ...]
    shape_signature: tuple[int, ...] | None
    has_rank: bool
    buffer: int
    quant: QuantInfo | None = None
    sparsity: SparsityInfo | None = None
    is_variable: bool = False

    @property
    def quantized(self) -> bool:
        """True for integer tensors that carry scale/zero-point quantization."""
        return (self.quant is not None and self.quant.scale.size > 0
                and self.dtype in ("int8", "uint8", "int16", "int32", "int64", "int4", "uint4"))


@dataclass(frozen=True, eq=False)
class TFLiteNode(Node):
    """A TFLite operator. `op_type` is the builtin name (e.g. "CONV_2D") or the custom code
    (domain "custom"); `version` the operator-code version; `attrs` the decoded options with
    schema defaults; `input_infos`/`output_infos` the tensors (None for omitted inputs);
    `settings` the conversion options (e.g. {"fold_fp16": True})."""

    input_infos: tuple[TensorInfo | None, ...] = ()
    output_infos: tuple[TensorInfo, ...] = ()
    subgraph: int = 0
    settings: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class TFLiteSubgraph:
    index: int
    name: str
    tensors: tuple[TensorInfo, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    nodes: tuple[TFLiteNode, ...]


@dataclass(frozen=True)
class SignatureDef:
    key: str
    subgraph_index: int
    inputs: tuple[tuple[str, int], ...]
    outputs: tuple[tuple[str, int], ...]


@dataclass(frozen=True, eq=False)
class TFLiteModel:
    """The whole file: every subgraph, signatures, metadata (name -> bytes), constants per
    subgraph (value name -> array)."""

    label: str
    version: int
    description: str
    subgraphs: tuple[TFLiteSubgraph, ...]
    signatures: tuple[SignatureDef, ...]
    metadata: Mapping[str, bytes]
    constants: tuple[Mapping[str, np.ndarray], ...]
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class TFLiteSourceGraph(SourceGraph):
    """SourceGraph of the chosen subgraph plus the TFLite details."""

    model: TFLiteModel | None = None
    subgraph_index: int = 0
    tensors: Mapping[str, TensorInfo] = field(default_factory=dict)
    signature: str | None = None
