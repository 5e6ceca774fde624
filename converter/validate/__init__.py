"""Validation: run the original model in its own framework (onnxruntime / LiteRT) and the
converted WebNN graph on a backend, on the same seeded inputs, and compare; when an output
fails, name the first source node whose output diverges.

```python
from converter.validate import validate
report = validate("model.onnx", free_dims={"batch": 1}, backend="reference")
print(report.to_text()); assert report.passed
```

`validate(..., browser=True)` also runs the converted graph in a real Chromium with WebNN
(`converter.validate.browser`, imported on its own: `from converter.validate.browser import
run_graph, browser_limits`).
"""

from __future__ import annotations

from converter.core.feeds import graph_feeds
from converter.frontends.detect import detect_format
from converter.validate.compare import Comparison, compare
from converter.validate.core import (
           DEFAULT_ATOL,
           DEFAULT_RTOL,
           Divergence,
           ValidationReport,
           check_in_browser,
           compile_graph,
           locate_divergence,
           run_converted,
           validate,
)
from converter.validate.inputs import make_inputs
from converter.validate.source import SourceRun, run_source
from converter.validate.taps import TappedGraph, convert_tapped

__all__ = ["DEFAULT_ATOL", "DEFAULT_RTOL", "Comparison", "Divergence", "SourceRun",
           "TappedGraph", "ValidationReport", "check_in_browser", "compare", "compile_graph",
           "convert_tapped", "detect_format", "graph_feeds", "locate_divergence",
           "make_inputs", "run_converted", "run_source", "validate"]
