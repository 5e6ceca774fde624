"""The records the TFLite reader produces besides the IR's own (`converter.core.ir`: nodes
with their `TensorInfo`s): subgraphs, signatures, the whole model (`TFLiteModel`) and the
`TFLiteSourceGraph` the importer walks. All are frozen; arrays in them are read-only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from converter.core.fixes import Fix
from converter.core.ir import Node, SourceGraph, TensorInfo


@dataclass(frozen=True, eq=False)
class TFLiteSubgraph:
    index: int
    name: str
    tensors: tuple[TensorInfo, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    nodes: tuple[Node, ...]


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
    """SourceGraph of the chosen subgraph plus the TFLite details; `settings` are the
    conversion settings it was read with (handlers' `ctx.settings`: `fold_fp16`,
    `max_while_iterations`, ...); `stored_dims` the dynamic (-1) input dimensions converted
    at their stored size because nobody set them (`input_dims` fixes with that size)."""

    model: TFLiteModel | None = None
    subgraph_index: int = 0
    tensors: Mapping[str, TensorInfo] = field(default_factory=dict)
    signature: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    stored_dims: tuple[Fix, ...] = ()
