"""The architecture rules of docs/architecture.md.

- Layers and import circles: pyproject.toml's import-linter contracts (`lint-imports`).
- Format names: outside `converter/frontends/` and `op_mappings/`, no code compares a value
  with a source-format name ("onnx", "tflite"): format-specific behaviour goes through the
  front-end registry.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("converter", "cli", "op_mappings")

FORMAT_NAMES = {"onnx", "tflite"}
FORMAT_AWARE = ("converter.frontends", "op_mappings")
"""Where source-format names may be compared with (the front ends and their op handlers)."""
OUTPUT_FORMATS = ("converter.io.export", "converter.io.serialize", "converter.runtimes", "cli")
"""Where "onnx" may be compared with as an output or lowering format (export --format onnx),
not as a source; "tflite" may not."""


def _modules() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = path
    return mods


MODULES = _modules()


def test_import_contracts_hold() -> None:
    """The layers and the absence of import circles, as pyproject.toml's import-linter
    contracts declare them (every import statement counts, lazy and type-only ones too)."""
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint) if lint.exists() else "lint-imports", "--no-cache"],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


MAX_LINES = 500
LONG_ALLOWED = {"models/make_transformers.py"}
"""A model generator must be one self-contained script: the zoo's cache key hashes the
script's own bytes (`converter.zoo.generated`), so helpers beside it would not count."""


def test_no_python_file_over_500_lines() -> None:
    tracked = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True,
                             text=True, check=False).stdout.split()
    paths = tracked or [str(p.relative_to(ROOT)) for pkg in (*PACKAGES, "tools", "tests")
                        for p in (ROOT / pkg).rglob("*.py")]
    long = {}
    for rel in paths:
        path = ROOT / rel
        if rel in LONG_ALLOWED or not path.is_file():
            continue
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > MAX_LINES:
            long[rel] = count
    assert not long, f"files over {MAX_LINES} lines (split them by what they hold): {long}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not m.startswith(FORMAT_AWARE)))
def test_no_format_branches_outside_front_ends(module: str) -> None:
    names = FORMAT_NAMES - {"onnx"} if module.startswith(OUTPUT_FORMATS) else FORMAT_NAMES
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                values = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                if any(isinstance(v, ast.Constant) and v.value in names for v in values):
                    hits.append(f"line {node.lineno}: {ast.unparse(node)}")
    assert not hits, f"{module} branches on a source-format name: {hits}"
