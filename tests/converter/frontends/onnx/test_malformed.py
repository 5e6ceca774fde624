"""Malformed ONNX models (the fuzz campaigns' findings, issue 12): every one is a one-line
conversion error saying what is wrong with which node (`InvalidModel`, reason
`invalid_model`), never an internal error. The oracle is the ONNX specification: the op
schemas (`onnx.defs`: input/output counts, required inputs and attributes, attribute
types), SSA form, the SparseTensorProto and external-data rules, the Loop/Scan/If body
signatures. Models are built with onnx.helper; some run through the real CLI too."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import AttributeProto, TensorProto, helper, numpy_helper

import converter
import converter.api
from cli.main import cli
from converter.core.errors import ConversionError, ConversionFailed, InvalidModel
from converter.frontends.onnx.frontend import import_source
from converter.frontends.onnx.reader import read_onnx

F = TensorProto.FLOAT


def _model(nodes: Sequence[onnx.NodeProto], inputs: dict[str, list[int]] | None = None,
           outputs: Sequence[str] = ("y",), inits: dict[str, np.ndarray] | None = None,
           opset: int = 17, **kwargs: Any) -> onnx.ModelProto:
    """A float model without shape inference (malformed nodes may upset it)."""
    graph = helper.make_graph(
        list(nodes), "g",
        [helper.make_tensor_value_info(n, F, s) for n, s in (inputs or {}).items()],
        [onnx.ValueInfoProto(name=o) for o in outputs],
        [numpy_helper.from_array(v, n) for n, v in (inits or {}).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=10, **kwargs)


def _error(model: Any) -> ConversionError:
    """The error converting `model` raises: the node's error when one node failed."""
    with pytest.raises(ConversionError) as info:
        converter.convert(model)
    err = info.value
    if isinstance(err, ConversionFailed):
        assert len(err.errors) == 1, err
        err = err.errors[0]
    assert "\n" not in str(err) and err.reason_code != "internal_error", err
    return err


def _invalid(model: Any, *words: str) -> str:
    """The one-line InvalidModel error of `model`, holding `words`."""
    err = _error(model)
    assert isinstance(err, InvalidModel), err
    text = str(err)
    for w in words:
        assert w in text, text
    return text


X2 = {"x": [2]}
ONE = {"one": np.ones(2, np.float32)}


# -- the schema: counts, required inputs and attributes, attribute types ----------------


@pytest.mark.parametrize("node, words", [
    (helper.make_node("Add", [], ["y"], name="n"),
     ["Add 'n' (opset 17)", "the node has 0 input(s), Add takes 2"]),
    (helper.make_node("Add", ["x", "x", "x"], ["y"], name="n"), ["has 3 input(s), Add takes 2"]),
    (helper.make_node("Where", ["x", "x"], ["y"]), ["has 2 input(s), Where takes 3"]),
    (helper.make_node("OneHot", ["x", "x"], ["y"]), ["has 2 input(s), OneHot takes 3"]),
    (helper.make_node("Range", [], ["y"]), ["has 0 input(s), Range takes 3"]),
    (helper.make_node("Pad", ["x"], ["y"]), ["has 1 input(s), Pad takes 2 to 3"]),
    (helper.make_node("Einsum", ["x"], ["y", "z", "w"], equation="i->i"),
     ["has 3 output(s), Einsum has 1"]),
    (helper.make_node("ConstantOfShape", [""], ["y"]),
     ["required input 0 (input) of ConstantOfShape is missing"]),
    (helper.make_node("Einsum", ["x"], ["y"]), ["required attribute 'equation' of Einsum"]),
    (helper.make_node("MaxPool", ["x"], ["y"]), ["required attribute 'kernel_shape'"]),
    (helper.make_node("Loop", ["", ""], ["y"]), ["required attribute 'body' of Loop"]),
    (helper.make_node("Scan", ["x"], ["y"], num_scan_inputs=1),
     ["required attribute 'body' of Scan"]),
    (helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=2),
     ["attribute 'kernel_shape' is INT, MaxPool expects INTS"]),
    (helper.make_node("Einsum", ["x"], ["y"], equation=3),
     ["attribute 'equation' is INT, Einsum expects STRING"]),
])
def test_node_against_schema(node: onnx.NodeProto, words: list[str]) -> None:
    _invalid(_model([node], X2), *words)


def test_trailing_omitted_inputs_and_outputs_are_allowed() -> None:
    """Trailing "" names are omitted optional values, not extra ones."""
    node = helper.make_node("Relu", ["x", ""], ["y", ""])
    result = converter.convert(_model([node], X2))
    np.testing.assert_array_equal(result.run({"x": np.array([-1, 2], np.float32)})["y"], [0, 2])


def test_no_pin_hint_for_a_malformed_node() -> None:
    """Pinning inputs mends no malformed node: no `pin_inputs` fix is suggested."""
    node = helper.make_node("Loop", ["m", ""], ["y"])  # no body
    model = _model([node], {"m": []})
    model.graph.input[0].type.tensor_type.elem_type = TensorProto.INT64
    err = _error(model)
    assert "body" in str(err) and not err.fixes and "pin" not in str(err)


# -- the graph: SSA form, subgraph names, bodies -----------------------------------------


def test_value_defined_twice() -> None:
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="a"),
             helper.make_node("Neg", ["x"], ["y"], name="b")]
    _invalid(_model(nodes, X2), "node 'b' (Neg) writes 'y', which node 'a' (Relu) also")


def test_value_redefining_a_graph_input() -> None:
    _invalid(_model([helper.make_node("Relu", ["x"], ["x"], name="a")], X2, outputs=["x"]),
             "writes 'x', which a graph input or initializer also defines")


def _loop(body: onnx.GraphProto, name: str = "loop") -> onnx.ModelProto:
    trip = {"trip": np.array(3, np.int64), "cond": np.array(True)}
    return _model([helper.make_node("Loop", ["trip", "cond", "x"], ["y"], name=name,
                                    body=body)], X2, inits={**trip})


def _body(nodes: Sequence[onnx.NodeProto], inputs: Sequence[tuple[str, int, list[int]]],
          outputs: Sequence[str], inits: dict[str, np.ndarray] | None = None
          ) -> onnx.GraphProto:
    return helper.make_graph(
        list(nodes), "body", [helper.make_tensor_value_info(*i) for i in inputs],
        [onnx.ValueInfoProto(name=o) for o in outputs],
        [numpy_helper.from_array(v, n) for n, v in (inits or {}).items()])


LOOP_INPUTS = [("iter", TensorProto.INT64, []), ("cond_in", TensorProto.BOOL, []),
               ("v_in", F, [2])]


def test_loop_body_reads_an_undefined_value() -> None:
    body = _body([helper.make_node("Identity", ["cond_typo"], ["cond_out"]),
                  helper.make_node("Add", ["v_in", "one"], ["v_out"])],
                 LOOP_INPUTS, ["cond_out", "v_out"], ONE)
    _invalid(_loop(body), "Loop 'loop'", "in subgraph 'body'", "reads ['cond_typo']",
             "which no node, graph input or initializer defines")


def test_subgraph_nodes_out_of_order_are_sorted() -> None:
    """As in the main graph, a subgraph's nodes may be listed in any order."""
    body = _body([helper.make_node("Add", ["v_mid", "one"], ["v_out"]),
                  helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                  helper.make_node("Identity", ["v_in"], ["v_mid"])],
                 LOOP_INPUTS, ["cond_out", "v_out"], ONE)
    result = converter.convert(_loop(body))
    np.testing.assert_array_equal(result.run({"x": np.zeros(2, np.float32)})["y"], [3, 3])


def test_loop_body_without_outputs() -> None:
    body = _body([helper.make_node("Identity", ["cond_in"], ["cond_out"])], LOOP_INPUTS, [])
    _invalid(_loop(body), "the Loop body declares 0 output(s), at least 2 expected")


def test_loop_body_with_wrong_input_count() -> None:
    body = _body([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                  helper.make_node("Identity", ["v_in"], ["v_out"])],
                 LOOP_INPUTS[1:], ["cond_out", "v_out"])
    _invalid(_loop(body), "the Loop body declares 2 input(s), 3 expected")


def test_loop_trip_count_must_be_one_number() -> None:
    body = _body([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                  helper.make_node("Identity", ["v_in"], ["v_out"])],
                 LOOP_INPUTS, ["cond_out", "v_out"])
    model = _loop(body)
    model.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.zeros(0, np.int64), "trip"))
    _invalid(model, "the trip count M (input 0) must hold one value, it has 0")


def test_if_branches_must_match_the_node_outputs() -> None:
    then = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [],
                             [onnx.ValueInfoProto(name="t")])
    other = helper.make_graph([], "else", [], [])
    node = helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)
    _invalid(_model([node], X2, inits={"c": np.array(True)}),
             "else_branch declares 0 output(s), 1 expected")


def test_scan_num_scan_inputs_and_axes() -> None:
    body = _body([helper.make_node("Add", ["s", "e"], ["s2"]),
                  helper.make_node("Identity", ["s2"], ["o"])],
                 [("s", F, [2]), ("e", F, [2])], ["s2", "o"])
    too_many = helper.make_node("Scan", ["x", "seq"], ["y", "z"], body=body, num_scan_inputs=3)
    seq = {"x": [2], "seq": [3, 2]}
    _invalid(_model([too_many], seq, outputs=["y", "z"]),
             "num_scan_inputs is 3, the node has 2 input(s)")
    axes = helper.make_node("Scan", ["x", "seq"], ["y", "z"], body=body, num_scan_inputs=1,
                            scan_input_axes=[0, 1])
    _invalid(_model([axes], seq, outputs=["y", "z"]),
             "attribute 'scan_input_axes' [0, 1] has 2 entries, 1 expected")


def test_graph_output_without_a_name() -> None:
    model = _model([helper.make_node("Relu", ["x"], ["y"])], X2)
    model.graph.output[0].name = ""
    _invalid(model, "graph output 0 has an empty name")


def test_empty_graph_output() -> None:
    """A zero-size output has no WebNN operand: unsupported, not a builder exception."""
    model = _model([helper.make_node("Identity", ["e"], ["y"])],
                   inits={"e": np.zeros((0, 3), np.float32)})
    err = _error(model)
    assert err.reason_code == "unsupported_attribute"
    assert "graph output 'y' is empty (shape [0, 3])" in str(err)


# -- functions and attribute references --------------------------------------------------


def test_function_body_not_producing_its_output() -> None:
    fn = helper.make_function("local", "Scaled", ["a"], ["b"],
                              [helper.make_node("Relu", ["a"], ["other"])],
                              [helper.make_opsetid("", 17)])
    node = helper.make_node("Scaled", ["x"], ["y"], domain="local", name="s")
    model = helper.make_model(
        helper.make_graph([node], "g", [helper.make_tensor_value_info("x", F, [2])],
                          [onnx.ValueInfoProto(name="y")]),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
        functions=[fn], ir_version=10)
    _invalid(model, "local::Scaled 's'", "the function body of Scaled does not produce ['y']")


def _ref_attr(name: str, ref: str) -> AttributeProto:
    attr = AttributeProto()
    attr.name, attr.ref_attr_name, attr.type = name, ref, AttributeProto.FLOAT
    return attr


def test_attribute_reference_outside_a_function() -> None:
    node = helper.make_node("LeakyRelu", ["x"], ["y"], name="lr")
    node.attribute.append(_ref_attr("alpha", "nope"))
    _invalid(_model([node], X2), "node 'lr' (LeakyRelu): attribute 'alpha' refers to "
             "attribute 'nope' of a function, but it is not inside a function body")


def test_attribute_reference_inside_a_subgraph() -> None:
    inner = helper.make_node("LeakyRelu", ["x"], ["t"], name="inner")
    inner.attribute.append(_ref_attr("alpha", "nope"))
    then = helper.make_graph([inner], "then", [], [onnx.ValueInfoProto(name="t")])
    node = helper.make_node("If", ["c"], ["y"], name="if", then_branch=then, else_branch=then)
    _invalid(_model([node], X2, inits={"c": np.array(True)}),
             "If 'if'", "node 'if/then/", "(LeakyRelu): attribute 'alpha' refers to")


# -- tensors: sparse initializers, external data -----------------------------------------


def _sparse(values: np.ndarray, indices: np.ndarray, dims: list[int]) -> onnx.SparseTensorProto:
    return helper.make_sparse_tensor(numpy_helper.from_array(values, "sp"),
                                     numpy_helper.from_array(indices, "sp_i"), dims)


@pytest.mark.parametrize("values, indices, words", [
    (np.ones(2, np.float32), np.array([3, 1_000_000_000]), "an index lies outside the shape"),
    (np.ones(2, np.float32), np.array([3, -1]), "an index lies outside the shape"),
    (np.ones(1, np.float32), np.array([[1, 4]]), "an index lies outside the shape"),
    (np.ones(2, np.float32), np.array([3]), "has 2 values but 1 indices"),
    (np.ones(2, np.float32), np.array([[1, 2, 3], [0, 0, 0]]), "indices of shape [2, 3] fit"),
    (np.ones(1, np.float32), np.array([0.5]), "indices must be integers"),
    (np.ones((1, 1), np.float32), np.array([0]), "values must be 1-D"),
])
def test_sparse_initializer(values: np.ndarray, indices: np.ndarray, words: str) -> None:
    model = _model([helper.make_node("Add", ["x", "sp"], ["y"])], {"x": [4, 4]})
    model.graph.sparse_initializer.append(_sparse(values, indices, [4, 4]))
    _invalid(model, "sparse tensor 'sp'", words)


@pytest.mark.parametrize("key, value", [("offset", "1e3"), ("length", "-8"), ("offset", "0x10")])
def test_external_data_numbers(tmp_path: Path, key: str, value: str) -> None:
    tensor = numpy_helper.from_array(np.ones(2, np.float32), "w")
    tensor.data_location = TensorProto.EXTERNAL
    tensor.ClearField("raw_data")
    for k, v in {"location": "w.bin", key: value}.items():
        entry = tensor.external_data.add()
        entry.key, entry.value = k, v
    (tmp_path / "w.bin").write_bytes(np.ones(2, np.float32).tobytes())
    model = _model([helper.make_node("Add", ["x", "w"], ["y"])], X2)
    model.graph.initializer.append(tensor)
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    _invalid(path, f"tensor 'w': external data {key} '{value}' is not a whole number of bytes")


def test_external_data_name_too_long(tmp_path: Path) -> None:
    tensor = numpy_helper.from_array(np.ones(2, np.float32), "w")
    tensor.data_location = TensorProto.EXTERNAL
    tensor.ClearField("raw_data")
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", "x" * 5000
    model = _model([helper.make_node("Add", ["x", "w"], ["y"])], X2)
    model.graph.initializer.append(tensor)
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    _invalid(path, "tensor 'w': external data file", "cannot be opened")


def test_generated_validation_input_over_budget(tmp_path: Path) -> None:
    """validate makes random inputs: one larger than max_constant_bytes is refused before
    numpy allocates it (was a MemoryError for a declared [2, 1e9] input)."""
    from converter.core.budgets import Budgets
    from converter.core.errors import BudgetExceeded

    path = tmp_path / "m.onnx"
    path.write_bytes(_model([helper.make_node("Relu", ["x"], ["y"])],
                            {"x": [512, 1024]}).SerializeToString())
    with pytest.raises(BudgetExceeded, match="the generated value of input 'x' would take"):
        converter.api.validate(path, budgets=Budgets(max_constant_bytes="1MiB"))


# -- outputs a handler computes vs outputs a node names ----------------------------------


def _import(model: onnx.ModelProto, results: list[Any]) -> ConversionError:
    """Import `model` with a lookup whose only handler returns `results` (None entries:
    the node's input operand)."""

    class Handler:
        const_inputs = ()
        fold = False

        @staticmethod
        def fn(ctx: Any, node: Any) -> list[Any]:
            x = ctx.operand(node.inputs[0])
            return [x if r is None else r for r in results]

    source = read_onnx(model)
    with pytest.raises(ConversionFailed) as info:
        import_source(source, lookup=lambda *a: Handler)
    (err,) = info.value.errors
    return err


def test_named_output_the_handler_does_not_compute() -> None:
    """Dropout's optional mask output named but not computed: an unsupported output."""
    node = helper.make_node("Dropout", ["x"], ["y", "mask"], name="d")
    err = _import(_model([node], X2, outputs=["y", "mask"]), [None])
    assert err.reason_code == "unsupported_attribute"
    assert "output 1 of Dropout ('mask') is not supported" in str(err)


def test_output_count_of_an_op_without_schema() -> None:
    node = helper.make_node("Thing", ["x"], ["y", "z"], domain="vendor", name="t")
    model = _model([node], X2, outputs=["y", "z"])
    model.opset_import.append(helper.make_opsetid("vendor", 1))
    err = _import(model, [None])
    assert isinstance(err, InvalidModel)
    assert "the node has 2 output(s), Thing computes 1" in str(err)


def test_results_past_the_named_outputs_are_dropped() -> None:
    """Dropout's mask, computed but not named by the node, is dropped."""
    node = helper.make_node("Dropout", ["x"], ["y"], name="d")

    class Handler:
        const_inputs = ()
        fold = False

        @staticmethod
        def fn(ctx: Any, node: Any) -> list[Any]:
            x = ctx.operand(node.inputs[0])
            return [x, np.ones(2, bool)]

    source = read_onnx(_model([node], X2))
    import_source(source, lookup=lambda *a: Handler)


# -- through the CLI --------------------------------------------------------------------


def _cli_error(tmp_path: Path, model: onnx.ModelProto) -> str:
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    r = CliRunner().invoke(cli, ["convert", str(path), "-o", str(tmp_path / "out")])
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and r.stderr.count("\n") == 1, r.stderr
    line = r.stderr.strip()
    assert line.startswith("error: ") and "internal" not in line, line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    return line


def test_cli_missing_inputs(tmp_path: Path) -> None:
    line = _cli_error(tmp_path, _model([helper.make_node("Add", [], ["y"], name="n")], X2))
    assert "[invalid_model] Add 'n' (opset 17): the node has 0 input(s), Add takes 2" in line


def test_cli_missing_attribute(tmp_path: Path) -> None:
    line = _cli_error(tmp_path, _model([helper.make_node("MaxPool", ["x"], ["y"], name="p")],
                                       {"x": [1, 1, 4, 4]}))
    assert "MaxPool 'p' (opset 17): required attribute 'kernel_shape' of MaxPool is missing" \
        in line


def test_cli_sparse_index(tmp_path: Path) -> None:
    model = _model([helper.make_node("Add", ["x", "sp"], ["y"])], {"x": [4, 4]})
    model.graph.sparse_initializer.append(
        _sparse(np.ones(1, np.float32), np.array([99]), [4, 4]))
    line = _cli_error(tmp_path, model)
    assert "sparse tensor 'sp': an index lies outside the shape [4, 4]" in line


def test_cli_subgraph_undefined_value(tmp_path: Path) -> None:
    body = _body([helper.make_node("Identity", ["nope"], ["cond_out"]),
                  helper.make_node("Identity", ["v_in"], ["v_out"])],
                 LOOP_INPUTS, ["cond_out", "v_out"])
    line = _cli_error(tmp_path, _loop(body))
    assert "Loop 'loop' (opset 17): in subgraph 'body':" in line and "reads ['nope']" in line


def test_name_that_is_not_utf8(tmp_path: Path) -> None:
    """protobuf gives such a string as bytes: refused when the file is read (was a
    UnicodeDecodeError when a subgraph's nodes were renamed)."""
    body = _body([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                  helper.make_node("Identity", ["v_in"], ["QQ"]),
                  helper.make_node("Identity", ["QQ"], ["v_out"])],
                 LOOP_INPUTS, ["cond_out", "v_out"])
    data = _loop(body).SerializeToString()
    assert data.count(b"QQ") == 2
    path = tmp_path / "m.onnx"
    path.write_bytes(data.replace(b"QQ", b"\xff\xfe"))
    _invalid(path, "is not a valid ONNX model: the name b'\\xff\\xfe' is not UTF-8 text")
    assert "not UTF-8" in _cli_error(tmp_path, onnx.load_from_string(path.read_bytes()))
