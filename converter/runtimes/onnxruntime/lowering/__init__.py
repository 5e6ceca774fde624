"""WebNN → ONNX lowerings, one module per op family, registered by `@lowering(op, ...)` in
`context.LOWERINGS` (keyed by spec op name). Importing this package loads every family."""

from __future__ import annotations

import importlib
import pkgutil

from converter.runtimes.onnxruntime.lowering.context import (
    LOWERINGS,
    Emitter,
    constant_value,
    lift,
    lowering,
)

for _mod in pkgutil.iter_modules(__path__):
    if _mod.name != "context":
        importlib.import_module(f"{__name__}.{_mod.name}")

__all__ = ["LOWERINGS", "Emitter", "constant_value", "lift", "lowering"]
