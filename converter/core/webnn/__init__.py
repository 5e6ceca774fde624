"""The W3C WebNN graph API in Python: `ML().create_context()`, `MLGraphBuilder`, `MLGraph`.

Modules: `ml` (the entry point), `context` (MLContext, MLTensor, MLGraph, the backend
protocol), `backends` (the backend registry), `builder` (MLGraphBuilder = `base` plus the
operator mixins of `ops/`), `operators` (the operator table), `operand`, `limits`,
`validation`, `dtypes`, `errors`, `run_memory`, `decompose`.

The names below are imported on first use, so that importing a submodule that needs none of
them (the backend registry, which `import converter` loads) does not load numpy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from converter.core.webnn.builder import MLGraphBuilder
    from converter.core.webnn.context import MLContext, MLGraph, MLTensor
    from converter.core.webnn.errors import (
        MLInvalidStateError,
        MLNotSupportedError,
        MLOperationError,
        MLTypeError,
    )
    from converter.core.webnn.ml import ML
    from converter.core.webnn.operand import MLOperand, MLOperandDescriptor, Operation

_HOMES = {"ML": "ml", "MLContext": "context", "MLGraph": "context", "MLTensor": "context",
          "MLGraphBuilder": "builder", "MLInvalidStateError": "errors",
          "MLNotSupportedError": "errors", "MLOperationError": "errors", "MLTypeError": "errors",
          "MLOperand": "operand", "MLOperandDescriptor": "operand", "Operation": "operand"}

__all__ = ["ML", "MLContext", "MLGraph", "MLGraphBuilder", "MLInvalidStateError",
           "MLNotSupportedError", "MLOperand", "MLOperandDescriptor", "MLOperationError",
           "MLTensor", "MLTypeError", "Operation"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
