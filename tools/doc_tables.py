"""The generated blocks of the documentation: each sits in a docs/ file between
`<!-- NAME:start -->` and `<!-- NAME:end -->` markers and is rendered from code, never edited
by hand.

- `ops-table` in docs/operators.md: the op support table (`webnn-convert ops`,
  `cli.support_table.render_markdown`; `webnn-convert ops --check docs/operators.md` checks it
  too);
- `budgets-table` in docs/security.md: the budget table (`converter.core.budgets.markdown_table`).

Run from the repository root:

    python -m tools.doc_tables            # check: exit 1 naming every stale block, with a diff
    python -m tools.doc_tables --write    # rewrite the stale blocks in place

Restrictions: only the text between a block's markers is compared and rewritten (whitespace at
its ends ignored); a file missing, or holding a block's markers not exactly once, is an error
(exit 2), never a guess.
"""

from __future__ import annotations

import argparse
import difflib
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
