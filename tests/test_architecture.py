"""The layer contract of docs/architecture.md, checked on the source with `ast`.

- No import cycles between modules of `converter`, `cli` and `op_mappings` (every import
  statement counts, also those inside functions; only `if TYPE_CHECKING:` blocks are
  skipped, since they never run).
- Layers, top to bottom: cli -> api -> front ends / serialize / export / op mappings ->
  import core -> runtimes -> IR / WebNN. A module imports only modules of its own layer or
  of layers below it.
- Format names: outside `converter/frontends/` and `op_mappings/`, no code compares a value
  with a source-format name ("onnx", "tflite"): format-specific behaviour goes through the
  front-end registry.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("converter", "cli", "op_mappings")

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ir/webnn", ("converter", "converter.ir", "converter.errors", "converter.webnn")),
    ("runtimes", ("converter.runtime", "converter.export.onnx", "converter.export.onnx_lowering")),
    ("import core", ("converter.importer", "converter.result")),
    ("front ends/serialize/export", ("converter.conversion", "converter.frontends",
                                     "converter.serialize", "converter.export", "op_mappings",
                                     "converter.targets")),
    ("api", ("converter.api", "converter.validate", "converter.zoo", "converter.onnx_backend")),
    ("cli", ("cli",)),
)
"""Bottom to top. A module belongs to the layer of the longest matching prefix."""

FORMAT_NAMES = {"onnx", "tflite"}
FORMAT_AWARE = ("converter.frontends", "op_mappings")
"""Where source-format names may be compared with (the front ends and their op handlers)."""
OUTPUT_FORMATS = ("converter.export", "converter.serialize", "converter.runtime", "cli")
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


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                skip.update(id(n) for n in ast.walk(stmt))
    return skip


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[:len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        names = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in MODULES else prefix
                 for a in node.names]
    out = []
    for name in names:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name and name != module:
            out.append(name)
    return out


def _imports() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_nodes(tree)
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in skip:
                targets.update(_targets(module, path.name == "__init__.py", node))
        edges[module] = targets
    return edges


EDGES = _imports()


def _layer(module: str) -> int:
    best, best_len = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    return best


def test_every_module_has_a_layer() -> None:
    missing = sorted(m for m in MODULES if _layer(m) < 0)
    assert not missing, f"modules outside every layer of LAYERS: {missing}"


def test_no_import_cycles() -> None:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in EDGES[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(EDGES):
        if module not in index:
            visit(module)
    assert not cycles, f"import cycles: {cycles}"


def test_layers_only_import_downwards() -> None:
    bad = [f"{m} ({LAYERS[_layer(m)][0]}) imports {t} ({LAYERS[_layer(t)][0]})"
           for m, targets in sorted(EDGES.items()) for t in sorted(targets)
           if _layer(t) > _layer(m)]
    assert not bad, "layer violations:\n" + "\n".join(bad)


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
