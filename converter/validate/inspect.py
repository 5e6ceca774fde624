"""`inspect_model()`: what a model file holds, without converting it: inputs and outputs as
declared (free dimensions by name, "?" for unnamed/dynamic ones), the free dimensions to fix,
and the histogram of op types with their support status from the op_mappings registries.

Status of an op type: "supported" (a handler exists for the node's opset / operator
version), "inlined" (ONNX: no handler, but a model-local function or the op's schema has a
function body, which the importer inlines), "unsupported" (neither; `detail` says why).
A supported op can still fail on particular attribute values; convert to be sure.

Restrictions: only the main graph is counted (ONNX If/Loop/Scan bodies and TFLite subgraphs
other than the converted one are not); ONNX external data is not loaded.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ..confine import allowed_roots
from ..frontends import get
from ..frontends.base import ModelInfo, OpUsage, TensorSummary
from ..frontends.detect import detect_format, model_label

__all__ = ["ModelInfo", "OpUsage", "TensorSummary", "inspect_model"]


def inspect_model(model: str | os.PathLike[str] | bytes, signature: str | None = None, *,
                  allow_roots: Iterable[str | os.PathLike[str]] | None = None) -> ModelInfo:
    """Inspect a model (see the module docstring). Raises `InvalidModel` for missing,
    truncated or malformed files and unknown signatures. `allow_roots`: folders besides
    the model's own that files it refers to may lie in (`converter.confine`; as `convert`
    takes it)."""
    with allowed_roots(allow_roots):
        frontend = get(detect_format(model))
        if isinstance(model, Path):
            model = str(model)
        return frontend.impl().inspect(model, label=model_label(model), signature=signature)
