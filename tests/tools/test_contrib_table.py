"""tools/doc_tables' contrib table (docs/contrib_ops.md): one row per com.microsoft schema of
onnxruntime with the ONNX handler registry's verdict; it is current (against the installed
onnxruntime when it is the version the page names, else against the page's own op list), and
the README's "N of M" figure is the page's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools import doc_tables
from tools.doc_tables import (
    BLOCKS,
    ContribSchemas,
    committed_contrib_schemas,
    contrib_table,
    current,
    installed_contrib_schemas,
)

ROOT = Path(__file__).resolve().parents[2]
BLOCK = next(b for b in BLOCKS if b.name == "contrib-table")


def _committed() -> ContribSchemas:
    schemas = committed_contrib_schemas(current(BLOCK))
    assert schemas is not None
    return schemas


def test_docs_contrib_table_is_current() -> None:
    """docs/contrib_ops.md holds the generated table (rewrite it with `python -m
    tools.doc_tables --write`)."""
    assert BLOCK.path == "docs/contrib_ops.md"
    assert current(BLOCK) == BLOCK.render().strip()


def test_committed_list_is_the_installed_onnxruntimes_when_versions_match() -> None:
    committed, installed = _committed(), installed_contrib_schemas()
    if committed.version != installed.version:
        pytest.skip(f"onnxruntime {installed.version} installed; the page lists "
                    f"{committed.version}'s schemas")
    assert committed == installed
    assert len(installed.ops) > 100 and ("GroupQueryAttention", 1) in installed.ops


def test_another_onnxruntime_keeps_the_committed_list(monkeypatch: pytest.MonkeyPatch) -> None:
    committed = _committed()
    other = ContribSchemas("0.0.1", "GPU", (("Attention", 1), ("NotAnOp", 7)))
    monkeypatch.setattr(doc_tables, "installed_contrib_schemas", lambda: other)
    assert BLOCK.render() == contrib_table(committed)


def test_contrib_table_rows() -> None:
    text = contrib_table(ContribSchemas("9.9", "CPU", (("Attention", 1), ("NotAnOp", 7))))
    assert text.startswith("Schemas of onnxruntime 9.9 (CPU build): "
                           "**1 of 2 com.microsoft operators** are converted.\n")
    assert re.search(r"^\| `Attention` \| 1 \| yes \| float32/float16;", text, re.MULTILINE)
    assert "| `NotAnOp` | 7 | no |  |" in text
    assert "`GroupQueryAttention`" in text.splitlines()[-1]  # handled, not in this list
    assert committed_contrib_schemas(text) == ContribSchemas(
        "9.9", "CPU", (("Attention", 1), ("NotAnOp", 7)))
    assert committed_contrib_schemas("no table") is None


def test_readme_states_the_pages_figure() -> None:
    summary = re.search(r"\*\*(\d+ of \d+) com\.microsoft operators\*\*", current(BLOCK))
    assert summary is not None
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(x for x in readme.splitlines() if "(docs/contrib_ops.md)" in x)
    assert f"{summary.group(1)} converted" in line, line
