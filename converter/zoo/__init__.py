"""The model-zoo job: read manifests, convert and validate every model in parallel, write
report.json / report.md / report.html.

```python
from converter.zoo import read_manifests, run_zoo, write_reports
report = run_zoo(read_manifests(["models/zoo.toml"]), jobs=4)
write_reports(report, Path("zoo-report"))
```
"""

from __future__ import annotations

from .manifest import ZooEntry, default_manifests, read_manifest, read_manifests
from .report import render_html, render_markdown, write_reports
from .runner import ZooReport, ZooResult, run_entry, run_zoo

__all__ = ["ZooEntry", "ZooReport", "ZooResult", "default_manifests", "read_manifest",
           "read_manifests", "render_html", "render_markdown", "run_entry", "run_zoo",
           "write_reports"]
