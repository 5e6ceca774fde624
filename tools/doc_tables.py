"""The generated blocks of the documentation: each sits in a docs/ file between
`<!-- NAME:start -->` and `<!-- NAME:end -->` markers and is rendered from code, never edited
by hand.

- `ops-table` in docs/operators.md: the op support table (`webnn-convert ops`,
  `cli.support_table.render_markdown`; `webnn-convert ops --check docs/operators.md` checks it
  too);
- `budgets-table` in docs/security.md: the budget table (`converter.core.budgets.markdown_table`);
- `contrib-table` in docs/contrib_ops.md: one row per `com.microsoft` operator schema the
  installed onnxruntime registers, converted or not by the ONNX handler registry
  (`contrib_table`).

Run from the repository root:

    python -m tools.doc_tables            # check: exit 1 naming every stale block, with a diff
    python -m tools.doc_tables --write    # rewrite the stale blocks in place

Restrictions: only the text between a block's markers is compared and rewritten (whitespace at
its ends ignored); a file missing, or holding a block's markers not exactly once, is an error
(exit 2), never a guess. The contrib table's operator list comes from the installed onnxruntime
only when its version is the one the committed table names (or the block is empty); under
another version the committed names and since versions are kept and only the converted and
restriction columns are regenerated, so the check does not depend on the machine's
onnxruntime. To move the table to a new onnxruntime, empty the block and run `--write`.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _ops_table() -> str:
    from cli.support_table import render_markdown

    return render_markdown()


def _budgets_table() -> str:
    from converter.core.budgets import markdown_table

    return markdown_table()


CONTRIB_PATH = "docs/contrib_ops.md"
CONTRIB_DOMAIN = "com.microsoft"
_SOURCE = re.compile(r"^Schemas of onnxruntime (\S+) \((\w+) build\)", re.MULTILINE)
_ROW = re.compile(r"^\| `([^`]+)` \| (\d+) \|", re.MULTILINE)


@dataclass(frozen=True)
class ContribSchemas:
    """The com.microsoft operator schemas of one onnxruntime: its version, its build ("CPU" or
    "GPU", `onnxruntime.get_device()`) and (op, since version) pairs sorted by op."""

    version: str
    build: str
    ops: tuple[tuple[str, int], ...]


def installed_contrib_schemas() -> ContribSchemas:
    """The com.microsoft schemas the installed onnxruntime registers (the newest since version
    of each op)."""
    import onnxruntime
    from onnxruntime.capi.onnxruntime_pybind11_state import get_all_operator_schema

    since: dict[str, int] = {}
    for schema in get_all_operator_schema():
        if schema.domain == CONTRIB_DOMAIN:
            since[schema.name] = max(since.get(schema.name, 0), int(schema.since_version))
    return ContribSchemas(str(onnxruntime.__version__), str(onnxruntime.get_device()),
                          tuple(sorted(since.items())))


def committed_contrib_schemas(text: str) -> ContribSchemas | None:
    """The schemas a committed contrib table names (its source line and rows); None when it
    has none."""
    source = _SOURCE.search(text)
    if source is None:
        return None
    ops = tuple((m.group(1), int(m.group(2))) for m in _ROW.finditer(text))
    return ContribSchemas(source.group(1), source.group(2), ops)


def contrib_table(schemas: ContribSchemas) -> str:
    """Markdown: a summary line, then one row per schema: op, since version, converted by the
    ONNX handler registry (yes / no) and the handler's restrictions; handlers of com.microsoft
    ops the schemas lack are named after the table."""
    from cli.support_table import restriction_text, support_rows, table_cell

    rows = {r["op_type"]: r for r in support_rows("onnx") if r["domain"] == CONTRIB_DOMAIN}
    names = {name for name, _ in schemas.ops}
    done = sum(1 for name in names if name in rows)
    lines = [f"Schemas of onnxruntime {schemas.version} ({schemas.build} build): "
             f"**{done} of {len(names)} {CONTRIB_DOMAIN} operators** are converted.", "",
             "| Op | Since | Converted | Restrictions |", "|---|---|---|---|"]
    for name, since in schemas.ops:
        row = rows.get(name)
        notes = table_cell(restriction_text(row["notes"])) if row else ""
        lines.append(f"| `{name}` | {since} | {'yes' if row else 'no'} | {notes} |")
    extra = sorted(set(rows) - names)
    if extra:
        lines += ["", "Handlers of ops this onnxruntime has no com.microsoft schema for: "
                  + ", ".join(f"`{name}`" for name in extra) + "."]
    return "\n".join(lines) + "\n"


def _contrib_table() -> str:
    installed = installed_contrib_schemas()
    try:
        committed = committed_contrib_schemas((ROOT / CONTRIB_PATH).read_text(encoding="utf-8"))
    except OSError:
        committed = None
    if committed is None or committed.version == installed.version:
        return contrib_table(installed)
    return contrib_table(committed)


@dataclass(frozen=True)
class Block:
    """One generated block: its marker name, the file (relative to the repository root) and
    the function that renders its text."""

    name: str
    path: str
    render: Callable[[], str]

    @property
    def start(self) -> str:
        return f"<!-- {self.name}:start -->"

    @property
    def end(self) -> str:
        return f"<!-- {self.name}:end -->"


BLOCKS: tuple[Block, ...] = (
    Block("ops-table", "docs/operators.md", _ops_table),
    Block("budgets-table", "docs/security.md", _budgets_table),
    Block("contrib-table", CONTRIB_PATH, _contrib_table),
)
"""Every generated block of the documentation."""


class BlockError(Exception):
    """A block's file or markers are missing or ambiguous (one line)."""


def _span(text: str, block: Block) -> tuple[int, int]:
    """(start, end) offsets of the text between the block's markers."""
    if text.count(block.start) != 1 or text.count(block.end) != 1:
        raise BlockError(f"{block.path}: needs exactly one {block.start} and one {block.end}")
    begin = text.index(block.start) + len(block.start)
    end = text.index(block.end)
    if end < begin:
        raise BlockError(f"{block.path}: {block.end} comes before {block.start}")
    return begin, end


def current(block: Block, root: Path = ROOT) -> str:
    """The block's text as its file holds it (stripped)."""
    path = root / block.path
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BlockError(f"{block.path}: cannot read it ({exc.strerror})") from None
    begin, end = _span(text, block)
    return text[begin:end].strip()


def diff(block: Block, root: Path = ROOT) -> str:
    """A unified diff from the file's block to the generated one; empty when current."""
    have, want = current(block, root), block.render().strip()
    if have == want:
        return ""
    return "\n".join(difflib.unified_diff(have.splitlines(), want.splitlines(),
                                          block.path, "generated", lineterm=""))


def write(block: Block, root: Path = ROOT) -> bool:
    """Rewrite the block in its file when stale (blank lines around the table, so markdown
    renders it); True when the file changed."""
    if not diff(block, root):
        return False
    path = root / block.path
    text = path.read_text(encoding="utf-8")
    begin, end = _span(text, block)
    path.write_text(f"{text[:begin]}\n\n{block.render().strip()}\n\n{text[end:]}",
                    encoding="utf-8")
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.doc_tables",
                                     description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true",
                        help="rewrite stale blocks in place instead of failing")
    args = parser.parse_args(argv)
    stale = 0
    try:
        for block in BLOCKS:
            if args.write:
                print(f"{block.path}: {block.name} "
                      f"{'rewritten' if write(block) else 'is up to date'}")
                continue
            text = diff(block)
            if text:
                print(text)
                print(f"error: {block.path}: {block.name} differs from the generated one "
                      "(rewrite it with `python -m tools.doc_tables --write`)", file=sys.stderr)
                stale += 1
            else:
                print(f"{block.path}: {block.name} is up to date")
    except BlockError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
