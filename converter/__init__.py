"""webnn-converter: convert ONNX and TFLite models into W3C WebNN graphs, run and validate them.

`converter.convert(model, free_dims=..., input_shapes=..., pin_inputs=...)` returns a
`ConversionResult`. Names are imported lazily so that `import converter` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_LAZY = {
    "convert": "converter.api",
    "load": "converter.export.api",
    "ConversionResult": "converter.result",
    "ConversionReport": "converter.importer",
    "ConversionError": "converter.errors",
    "ConversionFailed": "converter.errors",
    "UnsupportedOp": "converter.errors",
    "UnsupportedAttribute": "converter.errors",
    "UnsupportedDataType": "converter.errors",
    "RequiresConstantInput": "converter.errors",
    "InvalidModel": "converter.errors",
    "UnresolvedDimensions": "converter.errors",
    "SpecViolation": "converter.errors",
}

__all__ = ["ConversionError", "ConversionFailed", "ConversionReport", "ConversionResult",
           "InvalidModel", "RequiresConstantInput", "SpecViolation", "UnresolvedDimensions",
           "UnsupportedAttribute", "UnsupportedDataType", "UnsupportedOp", "__version__",
           "convert", "export", "load"]

if TYPE_CHECKING:
    from .api import ConversionResult, convert
    from .errors import (
        ConversionError,
        ConversionFailed,
        InvalidModel,
        RequiresConstantInput,
        SpecViolation,
        UnresolvedDimensions,
        UnsupportedAttribute,
        UnsupportedDataType,
        UnsupportedOp,
    )
    from .export.api import load
    from .importer import ConversionReport


def __getattr__(name: str) -> Any:
    if name == "export":
        import importlib

        return importlib.import_module("converter.export")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'converter' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
