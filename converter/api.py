"""The public Python API in one place: convert, run, validate, inspect, export and load.

```python
from converter.api import convert, validate, inspect_model, export, load
result = convert("model.onnx", free_dims={"batch": 1})     # ConversionResult
outputs = result.run({"x": image})                           # source names and dtypes
report = validate("model.onnx", free_dims={"batch": 1})     # ValidationReport, .passed
info = inspect_model("model.onnx")                           # ModelInfo, without converting
convert("model.onnx", budgets=Budgets(max_constant_bytes="4GiB"))  # raise a budget
export(result, "out", format="all")                          # .webnn + weights, .js/.html, .onnx
convert("model.onnx", target="chromium-tflite")             # rewritten around Chromium's deviations
convert("model.onnx", precision="float16")                  # float16 weights and compute, float32 I/O
graph = load("out/model.webnn")                              # MLGraph
```

`import converter` exposes the same names lazily (`converter.convert`, ...). Errors are the
classes of `converter.core.errors`, all subclasses of `ConversionError`.
"""

from __future__ import annotations

from converter.conversion.pipeline import convert
from converter.core.budgets import Budgets
from converter.core.errors import (
           BudgetExceeded,
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
from converter.importer import ConversionReport
from converter.io.export.exporter import export, load
from converter.passes.targets import Target, load_target
from converter.results.result import ConversionResult
from converter.validate import ValidationReport, validate
from converter.validate.inspect import ModelInfo, inspect_model

__all__ = ["BudgetExceeded", "Budgets", "ConversionError", "ConversionFailed", "ConversionReport", "ConversionResult",
           "InvalidModel", "ModelInfo", "RequiresConstantInput", "SpecViolation",
           "UnresolvedDimensions", "UnsupportedAttribute", "UnsupportedDataType",
           "Target", "UnsupportedOp", "ValidationReport", "convert", "export", "inspect_model",
           "load", "load_target", "validate"]
