"""The public Python API in one place: convert, run, validate, inspect, export and load, and
what a front end of the library (the command line of `cli/`) builds on.

```python
from converter.api import convert, validate, inspect_model, export, load
result = convert("model.onnx", free_dims={"batch": 1})     # ConversionResult
outputs = result.run({"x": image})                           # source names and dtypes
session = result.compile("onnxruntime", threads=1)          # CompiledModel: compiled once
outputs = session.run({"x": image})                          # the same, least per-call work
report = validate("model.onnx", free_dims={"batch": 1})     # ValidationReport, .passed
info = inspect_model("model.onnx")                           # ModelInfo, without converting
convert("model.onnx", budgets=Budgets(max_constant_bytes="4GiB"))  # raise a budget
export(result, "out", format="all")                          # .webnn + weights, .js/.html, .onnx
convert("model.onnx", target="chromium-tflite")             # rewritten around Chromium's deviations
convert("model.onnx", precision="float16")                  # float16 weights and compute, float32 I/O
graph = load("out/model.webnn")                              # MLGraph
```

`import converter` exposes the conversion names lazily (`converter.convert`, ...). Errors
are the classes of `converter.core.errors`, all subclasses of `ConversionError`; their
`fixes` are `Fix` records.

What is here, by group:
- conversion: `convert`, `ConversionResult`, `ConversionReport`, `detect_format`,
  `IMPORT_PROGRESS` (a context variable: set it to a callable `(done, total)` to follow the
  importer), `to_precision`, targets (`Target`, `load_target`, `known_targets`);
- export and loading: `export`, `load`, the export folder's checks (`check_outdir`,
  `FolderNotOurs`, `default_outdir`, `default_stem`, `current_umask`);
- running a graph: `CompiledModel` (what `ConversionResult.compile` gives), `compile_graph`,
  `check_run_memory`, `loaded_feeds` / `loaded_outputs` (inputs and outputs a target
  narrowed, in the caller's types);
- validation: `validate`, `ValidationReport`, `make_inputs`, `run_source`, the real browser
  (`ensure_browser`, `browser_limits`, `check_in_browser`, `BrowserUnavailable`) and the
  conformance sweep (`sweep_cases`, `sweep`, `check_sweep`, `write_sweep`);
- decoders: `is_decoder`, `generator_graphs` (the step graphs `export(..., format="js")`
  writes as a JavaScript generation runtime, docs/generation.md);
- inspection: `inspect_model`, `ModelInfo`, `front_ends` (the registered source formats:
  label, version unit, op registry with its support table, `sniff`);
- budgets: `Budgets`, `BUDGET_SPECS` (field -> `BudgetSpec`: flag, unit, help),
  `CONVERSION_BUDGETS`, `DEFAULT_BUDGETS`, `using_budgets`, `parse_size`, `parse_count`,
  `amount_text`, `format_bytes`, `out_of_memory`;
- errors and messages: the error classes, `Fix`, and the one-line message helpers
  (`one_line`, `quoted`, `show`, `exception_text`);
- files: `open_regular`, `read_bounded`, `NotRegularFile`.

The names of the first four groups load their machinery (onnx, the runtimes) on first use
(`__getattr__`), so that importing this module stays as light as the command line's start:
budgets, errors, files and the front-end registry load with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from converter.core.budgets import (
    CONVERSION_BUDGETS,
    Budgets,
    BudgetSpec,
    amount_text,
    format_bytes,
    out_of_memory,
    parse_count,
    parse_size,
)
from converter.core.budgets import DEFAULTS as DEFAULT_BUDGETS
from converter.core.budgets import SPECS as BUDGET_SPECS
from converter.core.budgets import using as using_budgets
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
    exception_text,
    one_line,
    quoted,
    show,
)
from converter.core.files import NotRegularFile, open_regular, read_bounded
from converter.core.fixes import Fix
from converter.frontends import Frontend
from converter.frontends import registered as front_ends

if TYPE_CHECKING:
    from converter.conversion.pipeline import convert
    from converter.core.feeds import loaded_feeds, loaded_outputs
    from converter.core.webnn.run_memory import check_run_memory
    from converter.frontends.detect import detect_format
    from converter.importer import IMPORT_PROGRESS
    from converter.io.export.exporter import (
        FolderNotOurs,
        check_outdir,
        current_umask,
        default_outdir,
        default_stem,
        export,
        load,
    )
    from converter.io.export.model_loader import load_model
    from converter.passes.precision import to_precision
    from converter.passes.targets import Target, known_targets, load_target
    from converter.results.compiled import CompiledModel
    from converter.results.host_steps import HostSteps
    from converter.results.loaded import LoadedModel
    from converter.results.report import ConversionReport
    from converter.results.result import ConversionResult
    from converter.validate import (
        ValidationReport,
        check_in_browser,
        compile_graph,
        make_inputs,
        run_source,
        validate,
    )
    from converter.validate.browser import BrowserUnavailable, browser_limits, ensure_browser
    from converter.validate.decoder_graphs import generator_graphs, is_decoder
    from converter.validate.inspect import ModelInfo, inspect_model
    from converter.validate.sweep import all_cases as sweep_cases
    from converter.validate.sweep import check_sweep, sweep, write_sweep

_LAZY: dict[str, tuple[str, str]] = {
    "convert": ("converter.conversion.pipeline", "convert"),
    "loaded_feeds": ("converter.core.feeds", "loaded_feeds"),
    "loaded_outputs": ("converter.core.feeds", "loaded_outputs"),
    "check_run_memory": ("converter.core.webnn.run_memory", "check_run_memory"),
    "detect_format": ("converter.frontends.detect", "detect_format"),
    "IMPORT_PROGRESS": ("converter.importer", "IMPORT_PROGRESS"),
    "ConversionReport": ("converter.results.report", "ConversionReport"),
    "FolderNotOurs": ("converter.io.export.exporter", "FolderNotOurs"),
    "check_outdir": ("converter.io.export.exporter", "check_outdir"),
    "current_umask": ("converter.io.export.exporter", "current_umask"),
    "default_outdir": ("converter.io.export.exporter", "default_outdir"),
    "default_stem": ("converter.io.export.exporter", "default_stem"),
    "export": ("converter.io.export.exporter", "export"),
    "load": ("converter.io.export.exporter", "load"),
    "load_model": ("converter.io.export.model_loader", "load_model"),
    "LoadedModel": ("converter.results.loaded", "LoadedModel"),
    "HostSteps": ("converter.results.host_steps", "HostSteps"),
    "to_precision": ("converter.passes.precision", "to_precision"),
    "Target": ("converter.passes.targets", "Target"),
    "known_targets": ("converter.passes.targets", "known_targets"),
    "load_target": ("converter.passes.targets", "load_target"),
    "CompiledModel": ("converter.results.compiled", "CompiledModel"),
    "ConversionResult": ("converter.results.result", "ConversionResult"),
    "ValidationReport": ("converter.validate", "ValidationReport"),
    "check_in_browser": ("converter.validate", "check_in_browser"),
    "compile_graph": ("converter.validate", "compile_graph"),
    "make_inputs": ("converter.validate", "make_inputs"),
    "run_source": ("converter.validate", "run_source"),
    "validate": ("converter.validate", "validate"),
    "BrowserUnavailable": ("converter.validate.browser", "BrowserUnavailable"),
    "browser_limits": ("converter.validate.browser", "browser_limits"),
    "ensure_browser": ("converter.validate.browser", "ensure_browser"),
    "generator_graphs": ("converter.validate.decoder_graphs", "generator_graphs"),
    "is_decoder": ("converter.validate.decoder_graphs", "is_decoder"),
    "ModelInfo": ("converter.validate.inspect", "ModelInfo"),
    "inspect_model": ("converter.validate.inspect", "inspect_model"),
    "sweep_cases": ("converter.validate.sweep", "all_cases"),
    "check_sweep": ("converter.validate.sweep", "check_sweep"),
    "sweep": ("converter.validate.sweep", "sweep"),
    "write_sweep": ("converter.validate.sweep", "write_sweep"),
}
"""The names loaded on first use: public name -> (module, name there)."""

__all__ = ["BUDGET_SPECS", "BrowserUnavailable", "BudgetExceeded", "BudgetSpec", "Budgets",
           "CONVERSION_BUDGETS", "CompiledModel", "ConversionError", "ConversionFailed",
           "ConversionReport", "ConversionResult", "DEFAULT_BUDGETS", "Fix",
           "FolderNotOurs", "Frontend", "HostSteps", "IMPORT_PROGRESS", "LoadedModel", "InvalidModel", "ModelInfo",
           "NotRegularFile", "RequiresConstantInput", "SpecViolation", "Target",
           "UnresolvedDimensions", "UnsupportedAttribute", "UnsupportedDataType",
           "UnsupportedOp", "ValidationReport", "amount_text", "browser_limits",
           "check_in_browser", "check_outdir", "check_run_memory", "check_sweep",
           "compile_graph", "convert", "current_umask", "default_outdir",
           "default_stem", "detect_format", "ensure_browser", "exception_text",
           "export", "format_bytes", "front_ends", "generator_graphs", "inspect_model",
           "is_decoder", "known_targets",
           "load", "load_model", "load_target", "loaded_feeds", "loaded_outputs", "make_inputs",
           "one_line", "open_regular", "out_of_memory", "parse_count", "parse_size",
           "quoted", "read_bounded", "run_source", "show", "sweep",
           "sweep_cases", "to_precision", "using_budgets", "validate", "write_sweep"]


def __getattr__(name: str) -> Any:
    """A name of `_LAZY`, imported on first use and kept."""
    if name not in _LAZY:
        raise AttributeError(f"module 'converter.api' has no attribute {name!r}")
    module, attr = _LAZY[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value
