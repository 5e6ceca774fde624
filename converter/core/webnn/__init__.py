"""The W3C WebNN graph API in Python (see ../shared/docs/architecture.md section 2)."""

from __future__ import annotations

from converter.core.webnn.builder import MLGraphBuilder
from converter.core.webnn.context import ML, MLContext, MLTensor
from converter.core.webnn.errors import (
           MLInvalidStateError,
           MLNotSupportedError,
           MLOperationError,
           MLTypeError,
)
from converter.core.webnn.graph import MLGraph
from converter.core.webnn.operand import MLOperand, MLOperandDescriptor, Operation

__all__ = ["ML", "MLContext", "MLGraph", "MLGraphBuilder", "MLInvalidStateError",
           "MLNotSupportedError", "MLOperand", "MLOperandDescriptor", "MLOperationError",
           "MLTensor", "MLTypeError", "Operation"]
