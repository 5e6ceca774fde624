"""The importer loop: collect-don't-stop errors, constant folding, types at the boundary,
the report."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import converter
from converter.core.errors import ConversionFailed, InvalidModel
from tests.op_mappings.onnx.harness import IR_VERSION, assert_close, run_ort


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
           outputs: list[str], inits: list[onnx.TensorProto] = (), opset: int = 13,
           extra_opsets: dict[str, int] | None = None) -> onnx.ModelProto:
    opsets = [helper.make_opsetid("", opset)]
    opsets += [helper.make_opsetid(d, v) for d, v in (extra_opsets or {}).items()]
    graph = helper.make_graph(nodes, "g", inputs, [onnx.ValueInfoProto(name=o) for o in outputs],
                              list(inits))
    model = helper.make_model(graph, opset_imports=opsets, ir_version=IR_VERSION)
    if not extra_opsets:
        model = onnx.shape_inference.infer_shapes(model)
    return model


def _x(shape: list[int | str], elem: int = TensorProto.FLOAT, name: str = "x"
       ) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def test_three_unsupported_ops_one_error() -> None:
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("FancyOp", ["a"], ["b"], name="fancy1", domain="com.example"),
        helper.make_node("Relu", ["b"], ["c"], name="after_fancy"),        # skipped silently
        helper.make_node("FancyOp", ["x"], ["d"], name="fancy2", domain="com.example"),
        helper.make_node("Add", ["c", "d"], ["e"], name="add"),            # skipped silently
        helper.make_node("Weird", ["x"], ["f"], name="weird", domain="com.example"),
        helper.make_node("Sigmoid", ["x"], ["g"], name="sig"),
    ]
    model = _model(nodes, [_x([2, 3])], ["e", "f", "g"], extra_opsets={"com.example": 1})
    with pytest.raises(ConversionFailed) as info:
        converter.convert(model, target="spec")
    err = info.value
    assert [e.node_name for e in err.errors] == ["fancy1", "fancy2", "weird"]
    assert {e.reason_code for e in err.errors} == {"unsupported_op"}
    assert err.counts == {"com.example::FancyOp": 2, "com.example::Weird": 1}
    text = str(err)
    assert "3 node(s)" in text and "com.example::FancyOp x2" in text
    report = err.report.to_dict()
    assert report["summary"] == {"native": 2, "decomposed": 0, "folded": 0, "unsupported": 3,
                                 "skipped": 2}
    assert report["ops"]["Relu"]["skipped"] == ["after_fancy"]
    assert report["ops"]["Add"]["skipped"] == ["add"]


def test_spec_violation_and_opset_errors_collected() -> None:
    nodes = [helper.make_node("Sqrt", ["i"], ["a"], name="sqrt_int"),   # WebNN sqrt: floats
             helper.make_node("Add", ["x", "x"], ["b"], name="old_add")]
    model = _model(nodes, [_x([3], TensorProto.INT32, "i"), _x([3])], ["a", "b"], opset=6)
    with pytest.raises(ConversionFailed) as info:
        converter.convert(model, target="spec")
    codes = {e.node_name: e.reason_code for e in info.value.errors}
    assert codes == {"sqrt_int": "spec_violation", "old_add": "unsupported_op"}
    assert "from opset 7" in str(info.value)


def test_shape_gather_concat_reshape_chain_folds() -> None:
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array([0], np.int64), "axes0"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus1")]
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
        helper.make_node("Relu", ["y"], ["z"]),
    ]
    model = _model(nodes, [_x(["batch", 3, 4])], ["z"], inits)
    result = converter.convert(model, free_dims={"batch": 2})
    assert [op.op for op in result.graph.operations] == ["reshape", "relu"]
    ops = result.report.to_dict()["ops"]
    for op in ("Shape", "Gather", "Unsqueeze", "Concat"):
        assert ops[op]["folded"], op
    assert ops["Reshape"]["native"]
    x = np.random.default_rng(0).normal(size=(2, 3, 4)).astype(np.float32)
    expected = run_ort(model, {"x": x})
    got = result.run({"x": x})
    assert_close(got["z"], expected["z"])
    assert got["z"].shape == (2, 12)


def test_all_constant_node_folds_through_reference_backend() -> None:
    inits = [numpy_helper.from_array(np.array([1.0, 4.0, 9.0], np.float32), "c")]
    nodes = [helper.make_node("Sqrt", ["c"], ["r"]), helper.make_node("Add", ["x", "r"], ["y"])]
    model = _model(nodes, [_x([3])], ["y"], inits)
    result = converter.convert(model, target="spec")
    assert [op.op for op in result.graph.operations] == ["add"]
    assert result.report.to_dict()["ops"]["Sqrt"]["folded"]
    x = np.array([0.5, 1.0, -1.0], np.float32)
    assert_close(result.run({"x": x})["y"], run_ort(model, {"x": x})["y"])


def test_bool_output_and_input() -> None:
    nodes = [helper.make_node("Greater", ["x", "x0"], ["g"]),
             helper.make_node("And", ["g", "m"], ["y"])]
    inits = [numpy_helper.from_array(np.array(0.0, np.float32), "x0")]
    model = _model(nodes, [_x([4]), _x([4], TensorProto.BOOL, "m")], ["y"], inits)
    result = converter.convert(model, target="spec")
    assert result.input_descriptors["m"].data_type == "uint8"
    feeds = {"x": np.array([-1, 2, 3, 0], np.float32), "m": np.array([True, True, False, True])}
    got = result.run(feeds)["y"]
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, run_ort(model, feeds)["y"])
    assert [vi.dtype for vi in result.outputs] == ["bool"]


def test_float64_converted_with_warning() -> None:
    inits = [numpy_helper.from_array(np.array([0.25, 0.5], np.float64), "c")]
    nodes = [helper.make_node("Mul", ["x", "c"], ["y"])]
    model = _model(nodes, [_x([2], TensorProto.DOUBLE)], ["y"], inits)
    result = converter.convert(model, target="spec")
    warnings = " ".join(result.report.warnings)
    assert "graph input 'x' converted from float64" in warnings
    assert "constant 'c' converted from float64" in warnings
    assert result.input_descriptors["x"].data_type == "float32"
    feeds = {"x": np.array([2.0, 3.0])}
    got = result.run(feeds)["y"]
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, run_ort(model, feeds)["y"], rtol=1e-6)


def test_int64_stays_int64() -> None:
    model = _model([helper.make_node("Add", ["x", "x"], ["y"])], [_x([3], TensorProto.INT64)],
                   ["y"])
    result = converter.convert(model, target="spec")
    assert result.input_descriptors["x"].data_type == "int64"
    got = result.run({"x": np.array([1, 2**40, -3], np.int64)})["y"]
    np.testing.assert_array_equal(got, np.array([2, 2**41, -6], np.int64))


def test_output_that_is_an_input_or_constant() -> None:
    inits = [numpy_helper.from_array(np.array([1, 2], np.int64), "c")]
    graph = helper.make_graph([], "g", [_x([2])], [_x([2], name="x"),
                                                   _x([2], TensorProto.INT64, "c")], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              ir_version=IR_VERSION)
    result = converter.convert(model, target="spec")
    got = result.run({"x": np.array([3.0, 4.0], np.float32)})
    np.testing.assert_array_equal(got["x"], [3.0, 4.0])
    np.testing.assert_array_equal(got["c"], [1, 2])


def test_unused_input_and_names() -> None:
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_x([2]), _x([5], name="unused")],
                   ["y"])
    result = converter.convert(model, target="spec")
    assert result.input_names == ["x", "unused"]
    assert result.output_names == ["y"]
    out = result.run({"x": np.array([-1.0, 1.0], np.float32), "unused": np.zeros(5, np.float32)})
    np.testing.assert_array_equal(out["y"], [0.0, 1.0])
    with pytest.raises(converter.InvalidModel, match="missing"):
        result.run({"x": np.zeros(2, np.float32)})


def test_pin_inputs_fold() -> None:
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"])]
    model = _model(nodes, [_x([2, 3]), _x([2], TensorProto.INT64, "shape")], ["y"])
    with pytest.raises(ConversionFailed, match="requires_constant_input"):
        converter.convert(model, target="spec")
    result = converter.convert(model, pin_inputs={"shape": [3, 2]})
    assert result.input_names == ["x"]
    assert result.output_descriptors["y"].shape == (3, 2)


def test_report_json_is_stable() -> None:
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r"),
             helper.make_node("Selu", ["a"], ["y"], name="s")]
    result = converter.convert(_model(nodes, [_x([2])], ["y"], opset=13))
    d = result.report.to_dict()
    assert list(d) == ["format", "summary", "ops", "warnings", "target", "outside_target"]
    assert d["target"] == "portable" and d["outside_target"] == []
    assert d["ops"]["Relu"] == {"native": ["r"], "decomposed": [], "folded": [],
                                "unsupported": [], "skipped": [], "webnn_ops": ["relu"]}
    assert d["ops"]["Selu"]["decomposed"] == ["s"]
    assert json.loads(json.dumps(d)) == d
    assert "Selu: decomposed 1" in result.report.to_text()


def test_import_converter_is_lazy() -> None:
    import subprocess
    import sys

    code = ("import sys, converter; "
            "assert not {'onnx', 'numpy', 'converter.core.webnn.context'} & set(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


# -- function bodies ---------------------------------------------------------------------


@pytest.mark.parametrize(("op", "attrs"), [("ThresholdedRelu", {"alpha": 0.3}),
                                           ("Shrink", {"lambd": 0.4, "bias": 0.1}),
                                           ("MeanVarianceNormalization", {"axes": [0, 1]})])
def test_schema_function_body_is_inlined(op: str, attrs: dict) -> None:
    """The op's handler (if any) is hidden, so its schema function body is converted."""
    from converter.frontends.onnx.frontend import import_source
    from converter.frontends.onnx.reader import read_onnx
    from op_mappings.onnx import lookup

    def without(op_type: str, domain: str, version: int) -> object:
        return None if op_type == op else lookup(op_type, domain, version)

    model = _model([helper.make_node(op, ["x"], ["y"], name="n", **attrs)], [_x([2, 3])],
                   ["y"], opset=18)
    result = import_source(read_onnx(model), lookup=without)
    entry = result.report.to_dict()["ops"][op]
    assert entry["decomposed"] == ["n"] and entry["webnn_ops"]
    x = np.random.default_rng(3).normal(size=(2, 3)).astype(np.float32)
    got = result.graph.context.compute(result.graph, {"x": x})["y"]
    assert_close(got, run_ort(model, {"x": x})["y"])


def test_context_dependent_function_body_is_inlined() -> None:
    """RMSNormalization (opset 23) has a context-dependent body; oracle: the formula."""
    model = _model([helper.make_node("RMSNormalization", ["x", "s"], ["y"], epsilon=1e-3)],
                   [_x([2, 4]), _x([4], name="s")], ["y"], opset=23, extra_opsets={})
    result = converter.convert(model, target="spec")
    rng = np.random.default_rng(4)
    x, s = rng.normal(size=(2, 4)), rng.normal(size=4)
    expected = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-3) * s
    got = result.run({"x": x.astype(np.float32), "s": s.astype(np.float32)})["y"]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def _local_model(functions: list[onnx.FunctionProto], node: onnx.NodeProto) -> onnx.ModelProto:
    graph = helper.make_graph([node], "g", [_x([2, 3])], [_x([2, 3], name="y")])
    return helper.make_model(graph, ir_version=IR_VERSION, functions=functions,
                             opset_imports=[helper.make_opsetid("", 18),
                                            helper.make_opsetid("local", 1)])


def test_model_local_function_with_attribute_reference() -> None:
    """y = LeakyRelu(x * x, alpha=@a) with `a` given by the caller or defaulted."""
    alpha = helper.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT, ref_attr_name="a")
    leaky = helper.make_node("LeakyRelu", ["t"], ["out"])
    leaky.attribute.append(alpha)
    fn = helper.make_function("local", "SqLeaky", ["inp"], ["out"],
                              [helper.make_node("Mul", ["inp", "inp"], ["t0"]),
                               helper.make_node("Neg", ["t0"], ["t"]), leaky],
                              [helper.make_opsetid("", 18)], attributes=["a"])
    x = np.random.default_rng(5).normal(size=(2, 3)).astype(np.float32)
    for kw in ({"a": 0.25}, {}):
        model = _local_model([fn], helper.make_node("SqLeaky", ["x"], ["y"], domain="local",
                                                    name="call", **kw))
        result = converter.convert(model, target="spec")
        assert result.report.to_dict()["ops"]["local::SqLeaky"]["decomposed"] == ["call"]
        assert_close(result.run({"x": x})["y"], run_ort(model, {"x": x})["y"])


def test_recursive_local_function_is_refused() -> None:
    """A function calling itself is refused before anything is inlined, naming the chain
    (it used to be inlined 16 levels deep before the nesting budget stopped it)."""
    fn = helper.make_function("local", "Rec", ["a"], ["b"],
                              [helper.make_node("Rec", ["a"], ["b"], domain="local")],
                              [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])
    model = _local_model([fn], helper.make_node("Rec", ["x"], ["y"], domain="local",
                                                name="rec"))
    with pytest.raises(InvalidModel, match=r"function 'local::Rec' calls itself "
                                           r"\(local::Rec -> local::Rec\)"):
        converter.convert(model, target="spec")


def test_function_body_error_names_inner_node() -> None:
    """An unsupported op inside a local function: the caller fails, naming the inner op."""
    fn = helper.make_function("local", "Bad", ["a"], ["b"],
                              [helper.make_node("Relu", ["a"], ["r"]),
                               helper.make_node("Mystery", ["r"], ["b"], domain="local")],
                              [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])
    model = _local_model([fn], helper.make_node("Bad", ["x"], ["y"], domain="local",
                                                name="bad"))
    with pytest.raises(ConversionFailed) as info:
        converter.convert(model, target="spec")
    err = info.value.errors[0]
    assert err.node_name == "bad" and err.reason_code == "unsupported_op"
    assert "Mystery" in err.message and "function body of Bad" in err.message
