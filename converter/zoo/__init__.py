"""The model-zoo job: read manifests, convert and validate every model in parallel, write
report.json / report.md / report.html.

```python
from converter.zoo import default_manifests, read_manifests, run_zoo, write_reports
report = run_zoo(read_manifests(default_manifests()), jobs=4)
write_reports(report, Path("zoo-report"))
```

`converter.zoo.sources` gives what one entry feeds to conversion and validation (the model
with random weights applied, input recipes, stored outputs), for tests and benchmarks.

Engines (`converter.zoo.engines`): `run_zoo(..., client=distributed.Client(...))` or
`scheduler="tcp://HOST:8786"` runs one Dask task per model (`converter.zoo.cluster`); with
`jobs` > 1 a Dask LocalCluster when the `cluster` extra is installed, else a process pool;
`budget=Budget(seconds, memory)` bounds each model (`converter.zoo.isolation`).
`converter.zoo.shards` splits a run into shards and merges their reports;
`converter.zoo.sweep` sums a sweep's report up per family (docs/sweeps.md).
"""

from __future__ import annotations

from converter.zoo.engines import run_zoo
from converter.zoo.manifest import (
           ZooEntry,
           default_manifests,
           materialize,
           read_manifest,
           read_manifests,
)
from converter.zoo.records import Budget, ZooReport, ZooResult
from converter.zoo.report import render_html, render_markdown, write_reports
from converter.zoo.runner import run_entry
from converter.zoo.sources import (
           ModelChanged,
           convert_options,
           entry_inputs,
           load_model,
           randomize_constant_of_shape,
           recipe_inputs,
           stored_outputs,
)

run = run_zoo
"""`run_zoo` (`converter.zoo.run(entries, client=...)` runs them on a Dask cluster)."""

__all__ = ["Budget", "ModelChanged", "ZooEntry", "ZooReport", "ZooResult", "convert_options",
           "default_manifests", "entry_inputs", "load_model", "materialize",
           "randomize_constant_of_shape", "read_manifest", "read_manifests", "recipe_inputs",
           "render_html", "render_markdown", "run", "run_entry", "run_zoo", "stored_outputs",
           "write_reports"]
