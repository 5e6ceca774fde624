"""The import graph of `converter.io.serialize`, read from the source with `ast`: no module of
the package imports another in a cycle (every import statement counts, also those inside
functions), and the package stays below the API (no import of `converter.io.export`,
`converter.api`, `converter.importer`, `cli` or `op_mappings`)."""

from __future__ import annotations

import ast
from pathlib import Path

import converter.io.serialize

PACKAGE = "converter.io.serialize"
FOLDER = Path(converter.io.serialize.__file__).parent
FORBIDDEN = ("converter.io.export", "converter.api", "converter.importer", "cli", "op_mappings")


def _modules(folder: Path = FOLDER) -> dict[str, Path]:
    """The package's modules by stem (`__init__` included)."""
    return {path.stem: path for path in sorted(folder.glob("*.py"))}


def _imported(path: Path) -> set[str]:
    """Absolute names of everything the module at `path` (a module of the package, not a
    subpackage) imports: modules, and `module.name` for each name of a `from` import."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = PACKAGE.split(".")[:len(PACKAGE.split(".")) - (node.level - 1)]
                prefix = ".".join(parts + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            out.add(prefix)
            out.update(f"{prefix}.{alias.name}" for alias in node.names)
    return out


def _edges(folder: Path = FOLDER) -> dict[str, set[str]]:
    """module -> the modules of the package it imports (by stem)."""
    modules = _modules(folder)
    edges: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = set()
        for name in _imported(path):
            if name.startswith(PACKAGE + "."):
                stem = name[len(PACKAGE) + 1:].split(".")[0]
                if stem in modules and stem != module:
                    targets.add(stem)
        edges[module] = targets
    return edges


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (a path that comes back to its start), or None."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(v: str) -> list[str] | None:
        state[v] = 1
        path.append(v)
        for w in sorted(edges[v]):
            if state.get(w) == 1:
                return path[path.index(w):] + [w]
            if w not in state and (found := visit(w)):
                return found
        path.pop()
        state[v] = 2
        return None

    for v in sorted(edges):
        if v not in state and (found := visit(v)):
            return found
    return None


def test_the_package_has_its_modules() -> None:
    edges = _edges()
    assert {"errors", "tables", "plan", "weights", "loader", "graph_builder"} <= set(edges)
    assert edges["loader"] >= {"graph_builder", "safetensors_weights", "text_parser"}
    assert edges["errors"] == set()


def test_no_import_cycles_inside_the_package() -> None:
    cycle = _cycle(_edges())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_cycle_finder_finds_cycles() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_package_stays_below_the_api() -> None:
    bad = sorted(f"{module} imports {name}" for module, path in _modules().items()
                 for name in _imported(path)
                 if any(name == f or name.startswith(f + ".") for f in FORBIDDEN))
    assert not bad, bad
