"""The W3C WebNN graph API in Python (see ../shared/docs/architecture.md section 2)."""

from __future__ import annotations

from .builder import MLGraphBuilder
from .context import ML, MLContext, MLTensor
from .errors import MLInvalidStateError, MLNotSupportedError, MLOperationError, MLTypeError
from .graph import MLGraph
from .operand import MLOperand, MLOperandDescriptor, Operation

__all__ = ["ML", "MLContext", "MLGraph", "MLGraphBuilder", "MLInvalidStateError",
           "MLNotSupportedError", "MLOperand", "MLOperandDescriptor", "MLOperationError",
           "MLTensor", "MLTypeError", "Operation"]
