"""The format-neutral source IR that every front end produces and the importer walks.

A front end (converter/frontends/<format>/) reads a model file into a `SourceGraph`: nodes in
topological order (op type, domain, version, attributes with the format's defaults filled in,
input/output value names), graph inputs/outputs with static shapes, and constants as numpy
arrays. Nothing here knows a file format: front ends may subclass `Node` / `SourceGraph` to
carry format details (e.g. TFLite quantization parameters), and `source_format` is only a
label (the front end's registry name) for reports.
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
class Node:
    """One source operator. `domain` is "" for the format's default domain; `version` is the
    version handlers are looked up by (ONNX: the model's opset for the domain; TFLite: the
    operator-code version); `name` is the node's name or `<op_type>_<index>` when the model
    left it empty; `inputs` keeps "" for omitted optional inputs; `attrs` has the format's
    defaults filled in (strings decoded, tensors as numpy arrays, lists as tuples); `proto`
    is the front end's own record of the node (opaque outside that front end)."""

    op_type: str
    domain: str
    version: int
    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: Mapping[str, Any]
    index: int = 0
    proto: Any = field(default=None, repr=False, compare=False)

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
