"""Models with several unsupported op types through the real CLI: `convert` fails with one
message naming every distinct op type without a handler with its domain and node count
(nodes skipped after a failed one, and nodes inside If branches and model-local functions,
counted too), and `inspect` lists the same op types, counted the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, save_model

from cli.main import cli
from converter.core.errors import ConversionFailed, UnsupportedOp
from converter.frontends.tflite.inspect import _reachable_nodes

EXPECTED = {"Unique": 1, "custom.a::Baz": 1, "custom.a::Foo": 3, "custom.a::Qux": 1,
            "custom.b::Bar": 1, "custom.b::Foo": 1}


def _model(path: Path) -> Path:
    """x -> custom.a::Foo x3 (a chain: the second and third are skipped) -> Relu; x ->
    custom.b::Bar, custom.b::Foo (same name, other domain), Unique; an If whose then branch
    holds custom.a::Baz; a call of the local function local::Wrap whose body holds
    custom.a::Qux."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    nodes, prev = [], "x"
    for i in range(3):
        nodes.append(helper.make_node("Foo", [prev], [f"f{i}"], domain="custom.a",
                                      name=f"foo{i}"))
        prev = f"f{i}"
    nodes += [helper.make_node("Relu", [prev], ["r"]),
              helper.make_node("Bar", ["x"], ["b"], domain="custom.b"),
              helper.make_node("Foo", ["x"], ["fb"], domain="custom.b"),
              helper.make_node("Unique", ["x"], ["u"]),
              helper.make_node("Wrap", ["x"], ["w"], domain="local")]
    then = helper.make_graph([helper.make_node("Baz", ["x"], ["t"], domain="custom.a")],
                             "then", [], [helper.make_tensor_value_info("t", TensorProto.FLOAT,
                                                                        [2, 3])])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2, 3])])
    nodes.append(helper.make_node("If", ["c"], ["iff"], then_branch=then, else_branch=other))
    wrap = helper.make_function("local", "Wrap", ["a"], ["z"],
                                [helper.make_node("Qux", ["a"], ["z"], domain="custom.a")],
                                [helper.make_opsetid("custom.a", 1)])
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
            for n in ("r", "b", "fb", "u", "w", "iff")]
    model = helper.make_model(
        helper.make_graph(nodes, "several_unsupported", [x, c], outs),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("custom.a", 1),
                       helper.make_opsetid("custom.b", 1), helper.make_opsetid("local", 1)],
        functions=[wrap], ir_version=8)
    save_model(model, path)
    return path


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _model(tmp_path_factory.mktemp("unsupported") / "several.onnx")


def _invoke(*args: object) -> object:
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_convert_names_every_unsupported_op_type_in_one_message(model: Path,
                                                                 tmp_path: Path) -> None:
    r = _invoke("convert", model, "-o", tmp_path / "out")
    assert r.exit_code == 2  # type: ignore[attr-defined]
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]  # type: ignore[attr-defined]
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    summary = lines[0].split("op types without a handler: ", 1)[1].split(")", 1)[0]
    assert summary == ", ".join(f"{k} x{n}" for k, n in sorted(EXPECTED.items()))
    r = _invoke("convert", model, "-o", tmp_path / "out", "--json")
    error = json.loads(r.stdout)["error"]  # type: ignore[attr-defined]
    assert error["reason_code"] == "conversion_failed"
    assert error["unsupported_ops"] == EXPECTED


def test_inspect_lists_the_same_op_types(model: Path) -> None:
    r = _invoke("inspect", model)
    assert r.exit_code == 2  # type: ignore[attr-defined]
    for key, n in EXPECTED.items():
        row = next(ln for ln in r.stdout.splitlines()  # type: ignore[attr-defined]
                   if ln.split()[:1] == [key])
        assert row.split()[1:3] == [str(n), "unsupported"], row
        assert f"{key} x{n}" in r.stderr  # type: ignore[attr-defined]
    data = json.loads(_invoke("inspect", model, "--json").stdout)  # type: ignore[attr-defined]
    assert sorted(data["unsupported"]) == sorted(EXPECTED)
    counts = {(f"{o['domain']}::" if o["domain"] else "") + o["op_type"]: o["count"]
              for o in data["ops"] if o["status"] == "unsupported"}
    assert counts == EXPECTED


def test_conversion_failed_counts_skipped_and_inner_nodes() -> None:
    """The tally without the importer: inner errors stand for their node, skipped nodes of
    an op type without a handler count, other skipped nodes do not."""

    class Record:
        def __init__(self, op_type: str, domain: str, status: str) -> None:
            self.op_type, self.domain, self.status = op_type, domain, status

    class Report:
        nodes = [Record("Foo", "x", "unsupported"), Record("Foo", "x", "skipped"),
                 Record("Relu", "", "skipped"), Record("If", "", "unsupported")]

    inner = UnsupportedOp("no handler", op_type="Baz", domain="x")
    wrapper = UnsupportedOp("in subgraph: no handler", op_type="If")
    wrapper.inner = (inner,)
    failed = ConversionFailed([UnsupportedOp("no handler", op_type="Foo", domain="x"),
                               wrapper], Report())
    assert failed.counts == {"If": 1, "x::Foo": 1}
    assert failed.unsupported_ops == {"x::Baz": 1, "x::Foo": 2}
    assert "op types without a handler: x::Baz x1, x::Foo x2" in str(failed)


def test_tflite_inspect_walks_the_reachable_subgraphs() -> None:
    """IF / WHILE bodies are counted once each; unreachable subgraphs are not."""

    class Node:
        def __init__(self, op_type: str, **attrs: int) -> None:
            self.op_type, self.attrs = op_type, attrs

    class Sub:
        def __init__(self, *nodes: Node) -> None:
            self.nodes = nodes

    subgraphs = [Sub(Node("IF", then_subgraph_index=1, else_subgraph_index=2), Node("ADD")),
                 Sub(Node("WHILE", cond_subgraph_index=2, body_subgraph_index=1)),
                 Sub(Node("CUSTOM_OP")), Sub(Node("NEVER_REACHED"))]
    assert [n.op_type for n in _reachable_nodes(subgraphs, 0)] == [
        "IF", "ADD", "CUSTOM_OP", "WHILE"]
