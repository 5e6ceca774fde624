"""The op support table, generated from the op_mappings registries (never hand-edited).

`support_rows(source)` gives the registry rows; `render_markdown` / `render_json` format
them; `check_readme(text, generated)` compares the table a document holds between the markers
`<!-- ops-table:start -->` and `<!-- ops-table:end -->` with the generated one (the project's
table is in docs/operators.md: `webnn-convert ops --check docs/operators.md`).
"""

from __future__ import annotations

import json
from typing import Any


def _sources() -> tuple[str, ...]:
    from converter.api import front_ends

    return tuple(sorted(front_ends()))


SOURCES = _sources()
"""The registered front ends, by name."""
START = "<!-- ops-table:start -->"
END = "<!-- ops-table:end -->"


def support_rows(source: str) -> list[dict[str, Any]]:
    """The op registry's support table of front end `source`, sorted by domain and op
    type."""
    from converter.api import front_ends

    frontends = front_ends()
    if source not in frontends:
        raise ValueError(f"unknown source format {source!r} (known: {', '.join(SOURCES)})")
    table = frontends[source].op_registry().support_table()
    return sorted(table, key=lambda r: (r["domain"], r["op_type"]))


def table_cell(text: str) -> str:
    """`text` on one line for a Markdown table cell (whitespace folded, `|` escaped)."""
    return " ".join(str(text).split()).replace("|", "\\|")


def restriction_text(notes: str) -> str:
    """The restriction part of a handler's docstring ("Restrictions: ..."), else the whole
    docstring."""
    key = "Restrictions:"
    if key in notes:
        return notes.split(key, 1)[1].strip()
    return notes.strip()


def render_markdown(sources: tuple[str, ...] = SOURCES) -> str:
    """Markdown: one section and table per source format."""
    from converter.api import front_ends

    parts: list[str] = []
    for source in sources:
        rows = support_rows(source)
        frontend = front_ends()[source]
        title, unit = frontend.label, frontend.version_unit
        parts.append(f"### {title} ({len(rows)} op types)\n")
        parts.append(f"| Op | Handlers from {unit} | Constant inputs | Restrictions |")
        parts.append("|---|---|---|---|")
        for r in rows:
            name = f"{r['domain']}::{r['op_type']}" if r["domain"] else r["op_type"]
            since = ", ".join(str(s) for s in r["since"])
            const = ", ".join(str(i) for i in r["const_inputs"])
            parts.append(f"| {table_cell(name)} | {since} | {const} | "
                         f"{table_cell(restriction_text(r['notes']))} |")
        parts.append("")
    return "\n".join(parts).rstrip() + "\n"


def render_json(sources: tuple[str, ...] = SOURCES) -> str:
    """JSON: {source: [rows]} with the registries' fields."""
    return json.dumps({s: support_rows(s) for s in sources}, indent=2, sort_keys=True) + "\n"


def readme_table(text: str) -> str | None:
    """The text between the markers (stripped), or None when they are missing."""
    start = text.find(START)
    end = text.find(END, start + len(START)) if start >= 0 else -1
    if start < 0 or end < 0:
        return None
    return text[start + len(START):end].strip()


def check_readme(text: str, generated: str) -> tuple[bool, str]:
    """(equal, unified diff) of the table a document holds (docs/operators.md) and the
    generated table. Raises ValueError when the markers are missing."""
    import difflib

    current = readme_table(text)
    if current is None:
        raise ValueError(f"no {START} ... {END} markers")
    want = generated.strip()
    if current == want:
        return True, ""
    diff = difflib.unified_diff(current.splitlines(), want.splitlines(), "document",
                                "generated", lineterm="")
    return False, "\n".join(diff)
