"""Exporters: write an MLGraph in formats other tools read.

`converter.export(result_or_graph, outdir, format="webnn"|"webnn-json"|"js"|"onnx"|"all",
weights="blob"|"safetensors")` writes files atomically (see `converter.export.api.export`);
`converter.export.onnx.to_onnx(graph)` lowers a WebNN graph to a standard ONNX model. Submodules are imported on demand so that exporting to
one format never requires the libraries of another.

This package is itself callable: importing a submodule makes Python bind the package object to
`converter.export`, so the package forwards calls to `api.export` to keep
`converter.export(...)` working.
"""

from __future__ import annotations

import sys
import types
from typing import Any


class _CallablePackage(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from converter.export.api import export

        return export(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
