"""webnn-converter: convert ONNX and TFLite models into W3C WebNN graphs, run and validate them.

The public API is `converter.api` (convert, validate, inspect_model, export, load, the result
and error classes); its names are also reachable here, imported lazily on first use so that
`import converter` stays fast: `converter.convert(model, free_dims=...)` returns a
`ConversionResult`; `converter.export(result, outdir, ...)` writes it out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# registers the built-in backends with the registry of converter.core.webnn.backends (cheap:
# each runtime is imported when its backend is first used)
import converter.runtimes  # noqa: F401
from converter.core.version import __version__

__all__ = ["BudgetExceeded", "Budgets", "ConversionError", "ConversionFailed", "ConversionReport", "ConversionResult",
           "InvalidModel", "ModelInfo", "RequiresConstantInput", "SpecViolation",
           "UnresolvedDimensions", "UnsupportedAttribute", "UnsupportedDataType",
           "UnsupportedOp", "ValidationReport", "__version__", "convert", "export",
           "inspect_model", "load", "load_model", "validate"]

if TYPE_CHECKING:
    from converter.api import (
        BudgetExceeded,
        Budgets,
        ConversionError,
        ConversionFailed,
        ConversionReport,
        ConversionResult,
        InvalidModel,
        ModelInfo,
        RequiresConstantInput,
        SpecViolation,
        UnresolvedDimensions,
        UnsupportedAttribute,
        UnsupportedDataType,
        UnsupportedOp,
        ValidationReport,
        convert,
        export,
        inspect_model,
        load,
        load_model,
        validate,
    )


def __getattr__(name: str) -> Any:
    import importlib

    if name not in __all__ or name == "__version__":
        raise AttributeError(f"module 'converter' has no attribute {name!r}")
    value = getattr(importlib.import_module("converter.api"), name)
    globals()[name] = value
    return value
