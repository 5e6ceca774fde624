"""Writer of the `.webnn` text form: `<stem>.webnn`, `<stem>.weights` and `<stem>.manifest.json`
(format doc sections 1, 3 and 4), in memory (`to_webnn`) or as files (`write_webnn`).

What is written is decided by `plan()` (see `converter.io.serialize.plan`); this module only puts
the plan's text, blob and manifest where they belong. Restrictions: those of `plan()` (no NaN,
identifiers sanitised); `write_webnn` writes into an existing folder, file by file.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from converter.core.webnn import MLGraph
from converter.io.serialize.plan import WebnnPlan, plan
from converter.io.serialize.weights import write_weights


@dataclass(frozen=True)
class WebnnFiles:
    """The three files of a graph, in memory: text, weights blob and manifest (JSON text)."""

    text: str
    weights: bytes
    manifest: str


def to_webnn(graph: MLGraph, name: str = "graph") -> WebnnFiles:
    """Serialise `graph` in memory (see `write_webnn` to write files)."""
    p = plan(graph, name)
    buf = io.BytesIO()
    write_weights(p, buf)
    return WebnnFiles(p.text(), buf.getvalue(), p.manifest_json())


def write_webnn(graph: MLGraph, outdir: str | Path, stem: str = "model",
                name: str | None = None, plan_: WebnnPlan | None = None, *,
                text: bool = True) -> list[Path]:
    """Write `<stem>.webnn`, `<stem>.weights` and `<stem>.manifest.json` into `outdir`
    (which must exist); returns the paths. `text=False` leaves the `.webnn` text out (the
    blob and manifest alone, as the JavaScript export reads them). Files are written
    directly: use `converter.io.export.exporter.export` for all-or-nothing output."""
    outdir = Path(outdir)
    p = plan_ or plan(graph, name or stem)
    text_path = outdir / f"{stem}.webnn"
    weights_path = outdir / f"{stem}.weights"
    manifest_path = outdir / f"{stem}.manifest.json"
    if text:
        with open(text_path, "w", encoding="utf-8", newline="\n") as f:
            for chunk in p.iter_text():
                f.write(chunk)
    with open(weights_path, "wb") as fb:
        write_weights(p, fb)
    manifest_path.write_text(p.manifest_json(), encoding="utf-8")
    return [*([text_path] if text else []), weights_path, manifest_path]


__all__ = ["WebnnFiles", "to_webnn", "write_webnn"]
