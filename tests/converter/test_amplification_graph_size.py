"""Amplification: small files that ask for much more work or memory than their size (issue
27 item 10). Each case is built here, run through the real CLI in a subprocess capped at
4 GiB of address space (`tests.converter.capped_cli`), and must end with exit 2 and one
`error:` line naming the flag that allows it; the work is bounded by counting (the sizing
walk's visits) or by the child's peak RSS (`os.wait4`), never by the wall clock.

This module: the size of the graph a file asks for.

- node counts: a file with more nodes than `--max-nodes` (refused right after parsing);
- nesting size: a tree of If nodes whose leaves call a local function (refused after about
  `--max-inlined-nodes` visits), and functions calling functions twice per level (2^40
  nodes from a few hundred bytes; refused in one linear walk);
- recursion: local functions calling themselves, directly or through another, in convert
  and inspect (one line naming the chain);
- TFLite control flow: a tree of IF subgraphs is counted, not expanded; a subgraph that
  calls itself is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from converter.core.budgets import Budgets
from converter.core.errors import BudgetExceeded, InvalidModel
from converter.frontends.onnx.sizing import size_model
from tests.converter.capped_cli import (
    OPSET,
    PEAK_RSS_KB,
    capped_cli,
    one_graph_model,
    refused,
    save,
)

# -- node counts -------------------------------------------------------------------------------


def _chain(n: int) -> onnx.ModelProto:
    """x -> Relu -> Relu -> ... (n nodes) -> y."""
    names = ["x", *(f"v{i}" for i in range(n - 1)), "y"]
    return one_graph_model([helper.make_node("Relu", [a], [b]) for a, b in zip(names, names[1:],
                                                                                 strict=False)])


def test_node_budget_refuses_a_large_file(tmp_path: Path) -> None:
    path = save(_chain(3000), tmp_path / "chain.onnx")
    for command in ("convert", "validate"):
        extra = ["-o", tmp_path / "out"] if command == "convert" else []
        code, err, _ = capped_cli(command, path, *extra, "--max-nodes", "1000")
        line = refused(code, err, "--max-nodes")
        assert "the main graph has 3,000 nodes, over the budget of 1,000 nodes" in line
    assert not (tmp_path / "out").exists()
    code, err, _ = capped_cli("convert", path, "-o", tmp_path / "out", "--max-nodes", "3000")
    assert code == 0, err


def test_default_node_budget_refuses_before_converting(tmp_path: Path) -> None:
    """260,000 nodes (6 MB) are over the default: refused after parsing, the child staying
    far below what converting them takes (3 GB for a million)."""
    model = _chain(2)
    node = model.graph.node[0]
    for _ in range(260_000 - 2):  # unconnected copies: the count is all that matters
        model.graph.node.add().CopyFrom(node)
    path = save(model, tmp_path / "big.onnx")
    code, err, peak = capped_cli("convert", path, "-o", tmp_path / "out")
    refused(code, err, "--max-nodes")
    assert peak < PEAK_RSS_KB, f"peak RSS {peak} KiB"


# -- nesting size ------------------------------------------------------------------------------


def _leaf_function() -> onnx.FunctionProto:
    return helper.make_function("local", "Leaf", ["a"], ["b"],
                                [helper.make_node("Relu", ["a"], ["b"])], OPSET)


def _if_tree(depth: int) -> onnx.ModelProto:
    """A balanced tree of If nodes `depth` levels deep (2^depth leaves, each a call of the
    local function Leaf); the condition is a graph input, so both branches count."""
    def branch(level: int, out: str) -> onnx.GraphProto:
        if level == 0:
            node = helper.make_node("Leaf", ["x"], [out], domain="local")
        else:
            node = helper.make_node("If", ["c"], [out], then_branch=branch(level - 1, out),
                                    else_branch=branch(level - 1, out))
        return helper.make_graph([node], f"b{level}", [],
                                 [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1])])

    top = helper.make_node("If", ["c"], ["y"], name="root",
                           then_branch=branch(depth - 1, "t"), else_branch=branch(depth - 1, "e"))
    return one_graph_model([top], [_leaf_function()],
                  inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [1]),
                          helper.make_tensor_value_info("c", TensorProto.BOOL, [])])


def test_if_tree_is_refused_after_counting_about_the_budget() -> None:
    """2^12 leaves: refused under --max-inlined-nodes 1000 after about 1000 visits (each
    visited leaf asks once whether a handler takes Leaf: that is the counter)."""
    asked: list[str] = []

    def handled(op: str, domain: str, version: int) -> bool:
        asked.append(op)
        return False

    model = _if_tree(12)
    with pytest.raises(BudgetExceeded, match=r"^If 'root' .*would inline at least") as info:
        size_model(model, "tree.onnx", Budgets(max_inlined_nodes=1000), handled)
    assert info.value.flag == "--max-inlined-nodes"
    assert len(asked) < 1000  # far fewer than the 4,096 leaves
    assert size_model(model, "tree.onnx", Budgets(max_inlined_nodes=20_000), handled
                      ).inlined == 2 * 4096 - 2 + 4096  # Ifs and leaves + the Relu bodies


def test_if_tree_through_the_cli(tmp_path: Path) -> None:
    path = save(_if_tree(10), tmp_path / "tree.onnx")
    code, err, _ = capped_cli("convert", path, "-o", tmp_path / "out", "--max-inlined-nodes", "500")
    line = refused(code, err, "--max-inlined-nodes")
    assert "If 'root'" in line and "over the budget of 500 nodes" in line


def _doubling_functions(levels: int) -> onnx.ModelProto:
    """F0 = Relu; Fk calls F(k-1) twice: F`levels` inlines 2^levels nodes."""
    fns = [helper.make_function("local", "F0", ["a"], ["b"],
                                [helper.make_node("Relu", ["a"], ["b"])], OPSET)]
    for k in range(1, levels + 1):
        fns.append(helper.make_function("local", f"F{k}", ["a"], ["b"], [
            helper.make_node(f"F{k - 1}", ["a"], ["m"], domain="local"),
            helper.make_node(f"F{k - 1}", ["m"], ["b"], domain="local")], OPSET))
    return one_graph_model([helper.make_node(f"F{levels}", ["x"], ["y"], domain="local", name="top")],
                  fns)


def test_exponential_function_calls_are_counted_not_expanded(tmp_path: Path) -> None:
    model = _doubling_functions(40)
    assert model.ByteSize() < 8192
    with pytest.raises(BudgetExceeded, match=r"^local::F40 'top'") as info:
        size_model(model, "fns.onnx")
    assert info.value.budget in ("max_inlined_nodes", "max_nesting")
    # 12 levels (3 x 2^12 - 2 nodes inlined: calls and Relus) are within the budgets and
    # are counted exactly, visiting each of the 26 nodes of the file once
    size = size_model(_doubling_functions(12), "fns.onnx")
    assert (size.inlined, size.visited) == (3 * 2 ** 12 - 2, 26)
    path = save(model, tmp_path / "fns.onnx")
    code, err, peak = capped_cli("convert", path, "-o", tmp_path / "out", "--max-nesting", "64")
    refused(code, err, "--max-inlined-nodes")
    assert peak < PEAK_RSS_KB, f"peak RSS {peak} KiB"


# -- recursion -------------------------------------------------------------------------------


def _recursive() -> onnx.ModelProto:
    """F calls G, G calls F (twice: inspect used to walk 2^64 calls)."""
    f = helper.make_function("local", "F", ["a"], ["b"],
                             [helper.make_node("G", ["a"], ["b"], domain="local")], OPSET)
    g = helper.make_function("local", "G", ["a"], ["b"], [
        helper.make_node("F", ["a"], ["m"], domain="local"),
        helper.make_node("F", ["m"], ["b"], domain="local")], OPSET)
    return one_graph_model([helper.make_node("F", ["x"], ["y"], domain="local", name="call")], [f, g])


def test_recursive_functions_are_refused_naming_the_chain(tmp_path: Path) -> None:
    path = save(_recursive(), tmp_path / "rec.onnx")
    for command in ("convert", "inspect", "validate"):
        extra = ["-o", tmp_path / "out"] if command == "convert" else []
        code, err, _ = capped_cli(command, path, *extra)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1, err
        assert "model-local function 'local::F' calls itself (local::F -> local::G -> " \
               "local::F)" in lines[0], lines[0]
    with pytest.raises(InvalidModel, match="calls itself"):
        size_model(_recursive(), "rec.onnx")


# -- TFLite control flow: subgraph trees and recursion ------------------------------------------


def _tflite_if_tree(levels: int, recursive: bool = False) -> bytes:
    """Subgraph 1 adds x + x; subgraph k (2..levels) is an IF whose both branches are
    subgraph k - 1 (2^levels operators inlined from a few hundred bytes per level); the main
    subgraph is an IF of subgraph `levels` both ways. `recursive`: subgraph 1 is an IF of
    itself instead."""
    from tests.op_mappings.tflite.tflite_builder import ModelBuilder, S

    def if_op(mb: Any, x: int, y: int, index: int) -> None:
        c = mb.const("c", np.array(True))
        o = S.IfOptionsT()
        o.thenSubgraphIndex = o.elseSubgraphIndex = index
        mb.op("IF", [c, x], [y], o)

    mb = ModelBuilder()
    x = mb.input("x", [1])
    y = mb.output(mb.tensor("y", [1]))
    for k in range(1, levels + 1):
        mb.subgraph(f"s{k}")
        sx = mb.input("x", [1])
        sy = mb.output(mb.tensor("y", [1]))
        if k == 1 and not recursive:
            mb.op("ADD", [sx, sx], [sy], S.AddOptionsT())
        else:
            if_op(mb, sx, sy, k if k == 1 else k - 1)
    mb.use(0)
    if_op(mb, x, y, levels)
    return mb.build()


def test_tflite_subgraph_tree_is_counted_not_expanded(tmp_path: Path) -> None:
    path = tmp_path / "tree.tflite"
    path.write_bytes(_tflite_if_tree(12))
    code, err, _ = capped_cli("convert", path, "-o", tmp_path / "out", "--max-inlined-nodes", "1000")
    line = refused(code, err, "--max-inlined-nodes")
    assert "IF" in line and "over the budget of 1,000 nodes" in line
    path.write_bytes(_tflite_if_tree(30))  # 2^30 operators: counted in one linear walk
    code, err, peak = capped_cli("convert", path, "-o", tmp_path / "out", "--max-nesting", "64")
    refused(code, err, "--max-inlined-nodes")
    assert peak < PEAK_RSS_KB, f"peak RSS {peak} KiB"
    path.write_bytes(_tflite_if_tree(3))  # 8 ADDs: converts
    code, err, _ = capped_cli("convert", path, "-o", tmp_path / "small")
    assert code == 0, err


def test_tflite_recursive_subgraph_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "rec.tflite"
    path.write_bytes(_tflite_if_tree(1, recursive=True))
    code, err, _ = capped_cli("convert", path, "-o", tmp_path / "out")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "subgraph 1 inlines itself through control flow (subgraphs 1 -> 1)" in lines[0]
