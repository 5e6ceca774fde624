"""Running the original model in its own framework (the front end's reference: onnxruntime
for ONNX, the LiteRT interpreter for TFLite), optionally keeping every intermediate value.

Intermediate values (`intermediates=True`):
- ONNX: every output of every node of the main graph is added as a graph output (types from
  ONNX shape inference when it knows them) and the model is run with graph optimizations
  disabled, so each value is what its node computes. Values inside subgraphs (If/Loop/Scan
  bodies) and non-tensor values (sequences, maps) are not collected. The model is serialized
  in memory for this, so it is limited to protobuf's 2 GiB.
- TFLite: the interpreter is created with `experimental_preserve_all_tensors=True` and without
  the default delegates (delegated partitions would not keep their tensors); only the main
  subgraph's tensors are collected; a signature whose subgraph is not the main one is run
  through its signature runner without intermediates.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from converter.frontends import get
from converter.frontends.base import SourceRun

__all__ = ["SourceRun", "run_source"]


def run_source(fmt: str, model: str | os.PathLike[str] | bytes, source: Any,
               inputs: Mapping[str, np.ndarray], *, intermediates: bool = False,
               threads: int = 0) -> SourceRun:
    """Run the original model with front end `fmt`'s reference framework on `inputs` (keyed
    by the source graph's input names)."""
    return get(fmt).impl().run_reference(model, source, inputs, intermediates=intermediates,
                                         threads=threads)
