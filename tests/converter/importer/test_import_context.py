"""The explicit ImportContext and the ImportObserver hook: handlers see settings, warnings,
conversion-wide state and subgraph inlining only through the context; observers see every
source node and may add graph outputs; no hidden attributes anywhere."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter.core.errors import (
    ConversionError,
    ConversionFailed,
    InternalError,
    UnsupportedAttribute,
)
from converter.core.ir import Node, SourceGraph, ValueInfo
from converter.core.webnn import ML, MLGraphBuilder, MLOperand
from converter.importer import (
    FrontEnd,
    ImportContext,
    Importer,
    ImportObserver,
    Value,
    check_output_count,
)
from op_mappings.registry import Handler

ROOT = Path(__file__).resolve().parents[3]


def _source(nodes: list[Node], outputs: list[str],
            constants: dict[str, np.ndarray] | None = None) -> SourceGraph:
    return SourceGraph("g", (ValueInfo("x", "float32", (2, 3)),),
                       tuple(ValueInfo(o, "float32", None) for o in outputs), tuple(nodes),
                       constants or {}, {"": 1}, source_format="test")


def _node(op: str, inputs: Sequence[str], outputs: Sequence[str], name: str = "") -> Node:
    return Node(op, "", 1, name or outputs[0], tuple(inputs), tuple(outputs), {})


def _lookup(table: dict[str, Any]) -> Any:
    def lookup(op_type: str, domain: str, version: int) -> Handler | None:
        fn = table.get(op_type)
        return None if fn is None else Handler(op_type, domain, 1, fn)
    return lookup


class _Plain:
    """A format without bodies, subgraphs, node checks or bool tracking (`FrontEnd`)."""

    def malformed(self, node: Node) -> ConversionError | None:
        return None

    def fold_early(self, loop: Importer, node: Node) -> bool:
        return False

    def check_outputs(self, node: Node, results: Sequence[object]) -> None:
        check_output_count(node, results)

    def track_bool(self, loop: Importer, node: Node) -> None:
        pass

    def has_body(self, loop: Importer, node: Node) -> bool:
        return False

    def inline(self, loop: Importer, node: Node) -> bool:
        return False

    def run_subgraph(self, loop: Importer, graph: Any,
                     bindings: Sequence[Value | str | None], tag: str) -> list[Value]:
        raise UnsupportedAttribute("this source format has no subgraph attributes")

    def no_handler_message(self, node: Node) -> str:
        return f"no handler for {node.op_type}"

    def recover(self, loop: Importer, node: Node, error: ConversionError) -> bool:
        return False

    def word_error(self, error: ConversionError) -> None:
        pass


PLAIN: FrontEnd = _Plain()


def _relu(ctx: ImportContext, node: Node) -> list[Any]:
    return [ctx.builder.relu(ctx.operand(node.inputs[0]))]


@dataclass
class _Counter:
    calls: list[tuple[str, bool]] = field(default_factory=list)


def test_handlers_see_settings_warnings_and_shared_state() -> None:
    seen: dict[str, Any] = {}

    def probe(ctx: ImportContext, node: Node) -> list[Any]:
        seen["settings"] = dict(ctx.settings)
        ctx.shared(_Counter).calls.append((node.name, ctx.folding))
        ctx.memo["k"] = node.name
        ctx.warn("probed")
        x = ctx.operand(node.inputs[0])
        return [ctx.builder.add(x, x)]

    consts = {"c": np.ones((2, 3), np.float32)}
    nodes = [_node("Probe", ["x"], ["a"]), _node("Probe", ["c"], ["b"]),  # b folds
             _node("Add2", ["a", "b"], ["y"])]
    add2 = lambda ctx, node: [ctx.builder.add(*ctx.inputs(node))]  # noqa: E731
    importer = Importer(_source(nodes, ["y"], consts), PLAIN,
                        _lookup({"Probe": probe, "Add2": add2}),
                        settings={"fold_fp16": True, "limit": 3})
    result = importer.run()
    assert seen["settings"] == {"fold_fp16": True, "limit": 3}
    assert importer.ctx.settings == {"fold_fp16": True, "limit": 3}
    with pytest.raises(TypeError):
        importer.ctx.settings["limit"] = 4  # type: ignore[index]
    # one conversion-wide state object, shared by the folding context of "b"
    assert importer.ctx.shared(_Counter).calls == [("a", False), ("b", True)]
    assert result.report.warnings == ["Probe 'a': probed", "Probe 'b': probed"]
    assert importer.ctx.memo == {"k": "a"}  # the folding context has its own memo
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = result.graph.context.compute(result.graph, {"x": x})["y"]
    np.testing.assert_array_equal(out, x + x + 2)


def test_context_has_no_importer_and_no_subgraphs_while_folding() -> None:
    ctx = ImportContext(MLGraphBuilder(ML().create_context()), {}, {}, folding=True)
    assert not hasattr(ctx, "importer")
    with pytest.raises(InternalError, match="only available while importing"):
        ctx.run_subgraph(object(), [])
    assert ctx.shared(_Counter) is ctx.shared(_Counter)
    assert not ctx.is_bool("x")


def test_subgraphs_go_through_the_front_end() -> None:
    calls: list[tuple[Any, list[Any], str]] = []

    class Sub(_Plain):
        def run_subgraph(self, loop: Importer, graph: Any,
                         bindings: Sequence[Value | str | None], tag: str) -> list[Value]:
            calls.append((graph, list(bindings), tag))
            return [loop.ctx.operand("x")]

    def call(ctx: ImportContext, node: Node) -> list[Any]:
        (out,) = ctx.run_subgraph(7, [ctx.operand(node.inputs[0])], "body")
        return [ctx.builder.relu(out)]

    Importer(_source([_node("Call", ["x"], ["y"])], ["y"]), Sub(), _lookup({"Call": call})).run()
    assert len(calls) == 1 and calls[0][0] == 7 and calls[0][2] == "body"
    assert isinstance(calls[0][1][0], MLOperand)


class _Recorder(ImportObserver):
    def __init__(self, extra: str | None = None) -> None:
        self.nodes: list[tuple[str, list[str]]] = []
        self.extra = extra
        self.outputs_called = False

    def on_node(self, node: Node, outputs: Sequence[Value | None]) -> None:
        kinds = ["none" if v is None else "numpy" if isinstance(v, np.ndarray) else "operand"
                 for v in outputs]
        self.nodes.append((node.name, kinds))

    def graph_outputs(self, ctx: ImportContext, outputs: dict[str, MLOperand]
                      ) -> dict[str, MLOperand]:
        self.outputs_called = True
        if self.extra is not None:
            outputs = {**outputs, "extra": ctx.operands[self.extra]}
        return outputs


def test_observer_sees_source_nodes_and_adds_outputs() -> None:
    consts = {"c": np.full((2, 3), -1.0, np.float32)}
    nodes = [_node("Relu", ["x"], ["a"]), _node("Relu", ["c"], ["folded"]),
             _node("Relu", ["a"], ["y"])]
    recorder = _Recorder(extra="a")
    result = Importer(_source(nodes, ["y"], consts), PLAIN, _lookup({"Relu": _relu}),
                      observer=recorder).run()
    assert recorder.nodes == [("a", ["operand"]), ("folded", ["numpy"]), ("y", ["operand"])]
    assert set(result.graph.outputs) == {"y", "extra"}
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    outs = result.graph.context.compute(result.graph, {"x": x})
    np.testing.assert_array_equal(outs["extra"], np.maximum(x, 0))


def test_observer_skips_failed_nodes_and_failed_imports() -> None:
    nodes = [_node("Relu", ["x"], ["a"]), _node("Nope", ["a"], ["b"]),
             _node("Relu", ["b"], ["y"])]
    recorder = _Recorder()
    with pytest.raises(ConversionFailed):
        Importer(_source(nodes, ["y"]), PLAIN, _lookup({"Relu": _relu}),
                 observer=recorder).run()
    assert recorder.nodes == [("a", ["operand"])]
    assert not recorder.outputs_called


HIDDEN_STATE = re.compile(r"__dict__|ctx\.importer\b|[gs]etattr\(ctx\s*,|ctx\._[a-z]|"
                          r"type\(f?[\"']")


@pytest.mark.parametrize("path", sorted(
    [*(ROOT / "converter" / "importer").glob("*.py"), ROOT / "converter" / "validate" / "taps.py",
     *(ROOT / "converter" / "frontends").glob("*/importer.py"),
     *(ROOT / "op_mappings").rglob("*.py")]), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_hidden_state(path: Path) -> None:
    """Handlers and importers keep state in declared attributes and reach format-specific
    things through the context's methods (no `__dict__`, `ctx.importer`, attributes set on
    the context, or classes built with `type()`)."""
    hits = [f"line {i}: {line.strip()}"
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if HIDDEN_STATE.search(line)]
    assert not hits, hits


def test_the_loop_is_composed_not_subclassed() -> None:
    """Formats differ only through a `FrontEnd` object: no class subclasses the loop, and
    the built-in front ends implement every protocol method (mypy checks the signatures
    where `import_source` passes them to `Importer`)."""
    from converter.frontends.onnx.importer import ONNXFrontEnd
    from converter.frontends.tflite.importer import TFLiteFrontEnd

    for path in [*(ROOT / "converter").rglob("*.py"), *(ROOT / "op_mappings").rglob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bases = [ast.unparse(b) for n in ast.walk(tree) if isinstance(n, ast.ClassDef)
                 for b in n.bases]
        assert not any(b.split(".")[-1] == "Importer" for b in bases), path
    wanted = {name for name in vars(FrontEnd) if not name.startswith("_")}
    for cls in (ONNXFrontEnd, TFLiteFrontEnd):
        assert wanted <= set(vars(cls)), (cls.__name__, wanted - set(vars(cls)))
